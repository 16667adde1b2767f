package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// machine is where install looks for clients: its OS, the user's home
// folder and environment. Tests give it a temporary home and any OS's
// layout.
type machine struct {
	goos, home string
	getenv     func(string) string
}

func newMachine(e *env) (machine, error) {
	m := machine{goos: runtime.GOOS, getenv: func(k string) string { v, _ := e.getenv(k); return v }}
	key := "HOME"
	if m.goos == "windows" {
		key = "USERPROFILE"
	}
	if m.home = m.getenv(key); m.home == "" {
		return m, errors.New("cannot find your home folder: " + key + " is not set")
	}
	return m, nil
}

// appData is the folder where Electron apps (Claude Desktop, VS Code)
// keep per-user settings.
func (m machine) appData() string {
	switch m.goos {
	case "darwin":
		return filepath.Join(m.home, "Library", "Application Support")
	case "windows":
		if v := m.getenv("APPDATA"); v != "" {
			return v
		}
		return filepath.Join(m.home, "AppData", "Roaming")
	}
	if v := m.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(m.home, ".config")
}

// mcpClient is an MCP client whose user configuration file install edits.
// docs/clients.md says where each path and format is documented.
type mcpClient struct {
	name, title string
	key         string // the member that maps server names to entries
	typed       bool   // entries carry "type": "stdio" (or "http")
	// urlKey is the member that holds the URL of a bridge serving HTTP:
	// "url", "serverUrl", or "" for a client that only starts commands.
	urlKey string
	// paths returns the client's own folder, there once the client has
	// run, and its configuration file.
	paths func(m machine) (dir, file string)
}

// found tells whether the client has run on this machine.
func (c mcpClient) found(m machine) bool {
	dir, file := c.paths(m)
	return exists(dir) || exists(file)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

var mcpClients = []mcpClient{
	{name: "claude-desktop", title: "Claude Desktop", key: "mcpServers", paths: func(m machine) (string, string) {
		dir := filepath.Join(m.appData(), "Claude")
		return dir, filepath.Join(dir, "claude_desktop_config.json")
	}},
	{name: "claude-code", title: "Claude Code", key: "mcpServers", typed: true, urlKey: "url", paths: func(m machine) (string, string) {
		if dir := m.getenv("CLAUDE_CONFIG_DIR"); dir != "" {
			return dir, filepath.Join(dir, ".claude.json")
		}
		return filepath.Join(m.home, ".claude"), filepath.Join(m.home, ".claude.json")
	}},
	{name: "cursor", title: "Cursor", key: "mcpServers", urlKey: "url", paths: func(m machine) (string, string) {
		dir := filepath.Join(m.home, ".cursor")
		return dir, filepath.Join(dir, "mcp.json")
	}},
	{name: "vscode", title: "VS Code", key: "servers", typed: true, urlKey: "url", paths: func(m machine) (string, string) {
		dir := filepath.Join(m.appData(), "Code", "User")
		return dir, filepath.Join(dir, "mcp.json")
	}},
	{name: "windsurf", title: "Windsurf", key: "mcpServers", urlKey: "serverUrl", paths: func(m machine) (string, string) {
		dir := filepath.Join(m.home, ".codeium", "windsurf")
		return dir, filepath.Join(dir, "mcp_config.json")
	}},
}

// findClient accepts a client's name as typed, ignoring case and
// separators (VSCode, claude_desktop); otherwise it suggests the nearest.
func findClient(name string) (mcpClient, error) {
	var names []string
	for _, c := range mcpClients {
		if fold(c.name) == fold(name) {
			return c, nil
		}
		names = append(names, c.name)
	}
	return mcpClient{}, usageError{fmt.Errorf("unknown client %q%s; the clients are %s", name, didYouMean(suggest(name, names)), clientNames())}
}

func clientNames() string {
	var names []string
	for _, c := range mcpClients {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}
