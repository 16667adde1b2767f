//go:build race

package console

const raceEnabled = true
