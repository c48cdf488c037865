package ipc

import (
	"errors"
	"fmt"
	"net/url"
)

// ParseURL parses a host's URL. Its error never repeats the URL, which
// may hold a password or token (url.Parse's errors quote it whole, and
// they end up on the terminal and in logs); an invalid escape is named
// without its characters, which may be part of the secret.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err == nil {
		return u, nil
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		return nil, errors.New("the URL does not parse")
	}
	var esc url.EscapeError
	if errors.As(ue.Err, &esc) {
		return nil, errors.New("the URL does not parse: an invalid %-escape (the URL is not shown: it may hold credentials)")
	}
	return nil, fmt.Errorf("the URL does not parse: %v (the URL is not shown: it may hold credentials)", ue.Err)
}
