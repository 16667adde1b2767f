//go:build race

package socketclient

// raceEnabled: the race detector allocates on its own, so allocation
// counts are checked without it.
const raceEnabled = true
