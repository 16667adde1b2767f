package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// peerDir holds the peer bridge built on mcp-go, a module of its own so
// that its dependencies stay out of the project's go.mod.
const peerDir = "scripts/bench/peers/mcpgo"

// peerModule is the library the peer is built on.
const peerModule = "github.com/mark3labs/mcp-go"

// buildPeer builds the peer bridge into work and returns its path and a
// name for it with the version of mcp-go it requires.
func buildPeer(work string) (path, name string, err error) {
	version, err := requiredVersion(filepath.Join(peerDir, "go.mod"), peerModule)
	if err != nil {
		return "", "", fmt.Errorf("the peer bridge (run from the repository root, or -peers=false): %w", err)
	}
	path, err = filepath.Abs(filepath.Join(work, "mcpgo-bridge"))
	if err != nil {
		return "", "", err
	}
	// Built as the bridge is, static; its module may need downloading.
	cmd := exec.Command("go", "build", "-trimpath", "-o", path, ".")
	cmd.Dir = peerDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("build the peer bridge in %s (it needs %s %s from the Go module proxy or the module cache; -peers=false skips it): %w", peerDir, peerModule, version, err)
	}
	return path, "mcp-go " + version, nil
}

// requiredVersion returns the version of module that the go.mod file at
// path requires.
func requiredVersion(path, module string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(s.Text()), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1], nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", errors.New(path + " does not require " + module)
}

// peerCmd is the command line of the peer bridge serving sock, with the
// bridge's manifests.
func (b *bench) peerCmd(sock string) []string {
	return []string{b.peer, "-socket", sock, "-manifests", b.manifests}
}
