package natsipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Subjects of a scene named NAME (NATS.md documents them).
func subject(name, what string) string { return "simvis." + name + "." + what }

func streamName(name string) string { return "SIMVIS_" + name }

// Change-log message headers.
const (
	hdrEpoch  = "Simvis-Epoch"
	hdrSeq    = "Simvis-Seq"
	hdrSource = "Simvis-Source"
	hdrDir    = "Simvis-Dir"
	hdrClient = "Simvis-Client"
	hdrKind   = "Simvis-Kind"
	hdrSize   = "Simvis-Size"
	hdrError  = "Simvis-Error"
	hdrInfo   = "Simvis-Info"
	hdrFiles  = "Simvis-Files"
	hdrChunk  = "Simvis-Chunk"
	hdrFrame  = "Simvis-Frame"
	// hdrRequestID names one change request across its retries: the host
	// executes it once and answers every retry with its outcome.
	hdrRequestID = "Simvis-Request-Id"
)

// Host states in values messages.
const (
	stateRunning = 1
	stateStopped = 2
)

// valuesHeader is the fixed part of a values message: the host's changed
// values after a cycle (or all of them, as a snapshot).
//
//	0  u64 epoch
//	8  u64 cycle
//	16 u32 values_used
//	20 u32 state (1 running, 2 stopped)
//	24 u32 n
//	28 n x (u32 index, f64 value)
const valuesHeader = 28

const pairSize = 12

type pair struct {
	index uint32
	value float64
}

type valuesMsg struct {
	epoch, cycle uint64
	used, state  uint32
	pairs        []pair
}

func (m *valuesMsg) encode() []byte {
	b := make([]byte, valuesHeader+pairSize*len(m.pairs))
	le := binary.LittleEndian
	le.PutUint64(b[0:], m.epoch)
	le.PutUint64(b[8:], m.cycle)
	le.PutUint32(b[16:], m.used)
	le.PutUint32(b[20:], m.state)
	le.PutUint32(b[24:], uint32(len(m.pairs)))
	putPairs(b[valuesHeader:], m.pairs)
	return b
}

func decodeValues(b []byte) (valuesMsg, error) {
	if len(b) < valuesHeader {
		return valuesMsg{}, errors.New("values message too short")
	}
	le := binary.LittleEndian
	m := valuesMsg{epoch: le.Uint64(b[0:]), cycle: le.Uint64(b[8:]), used: le.Uint32(b[16:]), state: le.Uint32(b[20:])}
	n := int(le.Uint32(b[24:]))
	if len(b) != valuesHeader+pairSize*n {
		return m, fmt.Errorf("values message of %d bytes does not hold %d pairs", len(b), n)
	}
	m.pairs = getPairs(b[valuesHeader:], n)
	return m, nil
}

// A set message is what clients publish to write values:
//
//	0  u64 epoch the indices were looked up in (0: any)
//	8  u32 n
//	12 n x (u32 index, f64 value)
const setHeader = 12

func encodeSet(epoch uint64, pairs []pair) []byte {
	b := make([]byte, setHeader+pairSize*len(pairs))
	binary.LittleEndian.PutUint64(b, epoch)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(pairs)))
	putPairs(b[setHeader:], pairs)
	return b
}

func decodeSet(b []byte) (uint64, []pair, error) {
	if len(b) < setHeader {
		return 0, nil, fmt.Errorf("set message of %d bytes: want 12 + 12n", len(b))
	}
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if len(b) != setHeader+pairSize*n {
		return 0, nil, fmt.Errorf("set message of %d bytes does not hold %d pairs", len(b), n)
	}
	return binary.LittleEndian.Uint64(b), getPairs(b[setHeader:], n), nil
}

func putPairs(b []byte, pairs []pair) {
	for i, p := range pairs {
		binary.LittleEndian.PutUint32(b[pairSize*i:], p.index)
		binary.LittleEndian.PutUint64(b[pairSize*i+4:], math.Float64bits(p.value))
	}
}

func getPairs(b []byte, n int) []pair {
	pairs := make([]pair, n)
	for i := range pairs {
		pairs[i] = pair{binary.LittleEndian.Uint32(b[pairSize*i:]), math.Float64frombits(binary.LittleEndian.Uint64(b[pairSize*i+4:]))}
	}
	return pairs
}

// describeReply answers simvis.NAME.desc. The epoch is a JSON string:
// it is a u64 above 2^53, which JSON parsers that read numbers as doubles
// would round.
type describeReply struct {
	Epoch      uint64           `json:"epoch,string"`
	ValuesUsed int              `json:"values_used"`
	PeriodNS   int64            `json:"period_ns"`
	Elements   []describeRecord `json:"elements"`
	Sensors    []describeSensor `json:"sensors"`
}

type describeRecord struct {
	Name   string   `json:"name"`
	At     string   `json:"insert_at"`
	Type   string   `json:"type"`
	Start  int      `json:"start"`
	Params []string `json:"params"`
}

// describeSensor tells consumers where and how often a sensor's frames
// come, and how to decode them.
type describeSensor struct {
	Name    string  `json:"name"`
	Type    string  `json:"type"`
	Kind    string  `json:"kind"` // the frames' Simvis-Kind; "" for a sensor that does not say (scene.FrameKinder)
	At      string  `json:"insert_at"`
	Subject string  `json:"subject"`
	RateHz  float64 `json:"rate_hz"` // frames per second of scene time
}

// requestReply answers simvis.NAME.request.
type requestReply struct {
	Seq   uint64 `json:"seq,omitempty"`   // change-log sequence of the executed command
	Error string `json:"error,omitempty"` // why it was refused
	Full  bool   `json:"full,omitempty"`  // refused because the host's queue was full
}

// rejectedMsg is what the host publishes on simvis.NAME.rejected: its
// refusal of an element's values (ipc.Rejection).
type rejectedMsg struct {
	Cycle  uint64 `json:"cycle"`
	First  int    `json:"first"`
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}
