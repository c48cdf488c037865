package ipc

import (
	"errors"
	"os"
	"time"
)

// In a browser (js/wasm) there are no shared-memory regions: the package
// builds there for its network side (Client, Mirror, a Conn of the
// program's own), and every region operation fails with errNoSharedMemory.

var errNoSharedMemory = errors.New("ipc: shared-memory regions need Linux (this is js/wasm)")

func createExclusive(string) (*os.File, string, error) { return nil, "", errNoSharedMemory }
func openOwned(string) (*os.File, os.FileInfo, error)  { return nil, nil, errNoSharedMemory }
func mapShared(*os.File, int) ([]byte, error)          { return nil, errNoSharedMemory }
func unmap([]byte) error                               { return nil }
func futexWait(_ *uint32, _ uint32, d time.Duration)   { time.Sleep(min(d, time.Millisecond)) }
func futexWake(*uint32)                                {}
func sleepPrecise(d time.Duration)                     { time.Sleep(d) }
