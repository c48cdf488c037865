package natsipc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A JetStream request that got no answer (context.DeadlineExceeded of its
// own attempt) is sent again while the caller's time lasts; an answer,
// another error or the caller's own deadline ends the calls.
func TestJSCallSendsAgainUnanswered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	calls := 0
	err := jsCall(ctx, func(c context.Context) error {
		calls++
		if d, ok := c.Deadline(); !ok || time.Until(d) > jsAttempt {
			t.Errorf("attempt %d: deadline %v, want one within %v", calls, d, jsAttempt)
		}
		if calls < 3 {
			return context.DeadlineExceeded // as a request unanswered in its attempt
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("answered on the third attempt: %v after %d calls", err, calls)
	}

	refused := errors.New("refused")
	calls = 0
	if err := jsCall(ctx, func(context.Context) error { calls++; return refused }); err != refused || calls != 1 {
		t.Errorf("an error other than no answer: %v after %d calls, want it after one", err, calls)
	}

	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	calls = 0
	err = jsCall(short, func(c context.Context) error { calls++; <-c.Done(); return c.Err() })
	if !errors.Is(err, context.DeadlineExceeded) || calls != 1 {
		t.Errorf("the caller's deadline passed: %v after %d calls, want its deadline after one", err, calls)
	}
}
