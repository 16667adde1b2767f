//go:build !race

package socketclient

const raceEnabled = false
