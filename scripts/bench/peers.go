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

// A peer is a server like the bridge built on another library, in a
// module of its own so that the library stays out of the project's
// go.mod.
type peer struct {
	dir    string // the module's folder, from the repository's root
	module string // the library it is built on
	name   string // how the report names it, before the library's version
}

var (
	// mcpgoPeer is measured in the stdio rows that compare (result and
	// pipelined).
	mcpgoPeer = peer{dir: "scripts/bench/peers/mcpgo", module: "github.com/mark3labs/mcp-go", name: "mcp-go"}
	// gosdkPeer is measured in the HTTP rows.
	gosdkPeer = peer{dir: "scripts/bench/peers/gosdk", module: "github.com/modelcontextprotocol/go-sdk", name: "go-sdk"}
)

// build builds the peer into work and returns its path and the version
// of the library it requires.
func (p peer) build(work string) (path, version string, err error) {
	version, err = requiredVersion(filepath.Join(p.dir, "go.mod"), p.module)
	if err != nil {
		return "", "", fmt.Errorf("the %s peer (run from the repository root, or -peers=false): %w", p.name, err)
	}
	path, err = filepath.Abs(filepath.Join(work, filepath.Base(p.dir)+"-peer"))
	if err != nil {
		return "", "", err
	}
	// Built as the bridge is, static; its module may need downloading.
	cmd := exec.Command("go", "build", "-trimpath", "-o", path, ".")
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("build the %s peer in %s (it needs %s %s from the Go module proxy or the module cache; -peers=false skips it): %w", p.name, p.dir, p.module, version, err)
	}
	return path, version, nil
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

// peerCmd is the command line of the mcp-go peer bridge serving sock,
// with the bridge's manifests.
func (b *bench) peerCmd(sock string) []string {
	return []string{b.peer, "-socket", sock, "-manifests", b.manifests}
}
