package cli

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestReloadOnEveryProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var one atomic.Bool
	around := reloadOnEveryProcessor(4, &one)
	runtime.GOMAXPROCS(2)
	var during int
	around(func() { during = runtime.GOMAXPROCS(0) })
	if during != 2 || runtime.GOMAXPROCS(0) != 2 {
		t.Errorf("not serving on one processor: %d processors during the reload, %d after; want 2 and 2", during, runtime.GOMAXPROCS(0))
	}
	one.Store(true)
	runtime.GOMAXPROCS(1)
	around(func() { during = runtime.GOMAXPROCS(0) })
	if during != 4 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("serving on one processor: %d processors during the reload, %d after; want 4 and 1", during, runtime.GOMAXPROCS(0))
	}
	around = reloadOnEveryProcessor(1, &one)
	around(func() { during = runtime.GOMAXPROCS(0) })
	if during != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("on a one-processor machine: %d processors during the reload, %d after; want 1 and 1", during, runtime.GOMAXPROCS(0))
	}
}
