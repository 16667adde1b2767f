//go:build ignore

// lipo joins thin macOS executables into one universal ("fat") binary, as
// Apple's `lipo -create` does, on any OS. An MCP Bundle chooses its command
// by operating system only (mcp_config.platform_overrides is keyed by
// process.platform), so the bundle ships one file that macOS runs natively
// on Apple silicon and on Intel Macs.
//
//	go run scripts/bundle/lipo.go OUT THIN...
package main

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"os"
)

// alignLog2 aligns each slice to 2^14 bytes, the arm64 macOS page size
// (lipo's own choice for arm64, and a multiple of the x86_64 one).
const alignLog2 = 14

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: go run lipo.go OUT THIN THIN...")
		os.Exit(2)
	}
	if err := lipo(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "lipo:", err)
		os.Exit(1)
	}
}

func lipo(out string, thin []string) error {
	type slice struct {
		cpu, sub uint32
		data     []byte
	}
	var slices []slice
	for _, name := range thin {
		f, err := macho.Open(name)
		if err != nil {
			return err
		}
		s := slice{cpu: uint32(f.Cpu), sub: f.SubCpu}
		f.Close()
		if s.data, err = os.ReadFile(name); err != nil {
			return err
		}
		slices = append(slices, s)
	}

	// <mach-o/fat.h>: a header and one fat_arch record per slice, all
	// big-endian, then the slices unchanged (each keeps its own code
	// signature), each at a multiple of 2^alignLog2.
	round := func(n int) int { return (n + 1<<alignLog2 - 1) &^ (1<<alignLog2 - 1) }
	fat := binary.BigEndian.AppendUint32(nil, macho.MagicFat)
	fat = binary.BigEndian.AppendUint32(fat, uint32(len(slices)))
	offset := 8 + 20*len(slices)
	for _, s := range slices {
		offset = round(offset)
		for _, v := range []uint32{s.cpu, s.sub, uint32(offset), uint32(len(s.data)), alignLog2} {
			fat = binary.BigEndian.AppendUint32(fat, v)
		}
		offset += len(s.data)
	}
	for _, s := range slices {
		fat = append(fat, make([]byte, round(len(fat))-len(fat))...)
		fat = append(fat, s.data...)
	}
	if err := os.WriteFile(out, fat, 0o755); err != nil {
		return err
	}

	// Read it back as macOS would.
	f, err := macho.OpenFat(out)
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	defer f.Close()
	if len(f.Arches) != len(slices) {
		return fmt.Errorf("%s: %d slices, want %d", out, len(f.Arches), len(slices))
	}
	return nil
}
