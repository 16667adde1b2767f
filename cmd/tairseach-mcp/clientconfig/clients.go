// Package clientconfig edits the user configuration files of MCP clients
// (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf) for install,
// uninstall and doctor: where each client keeps its file on each OS, the
// shape of the bridge's entry in it (a command it starts, or the URL of a
// bridge serving HTTP), and the change of that one entry with the rest of
// the file kept, a backup and an atomic write. docs/clients.md says where
// each path and format is documented.
//
// Its messages are written for the person running tairseach-mcp install
// and name that command's flags (--force, --name).
package clientconfig

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// Machine is where the clients are looked for: its OS, the user's home
// folder and environment. Tests give it a temporary home and any OS's
// layout.
type Machine struct {
	GOOS, Home string
	Getenv     func(string) string
}

// NewMachine returns this machine, its environment read with getenv.
func NewMachine(getenv func(string) string) (Machine, error) {
	m := Machine{GOOS: runtime.GOOS, Getenv: getenv}
	key := "HOME"
	if m.GOOS == "windows" {
		key = "USERPROFILE"
	}
	if m.Home = m.Getenv(key); m.Home == "" {
		return m, errors.New("cannot find your home folder: " + key + " is not set")
	}
	return m, nil
}

// appData is the folder where Electron apps (Claude Desktop, VS Code)
// keep per-user settings.
func (m Machine) appData() string {
	switch m.GOOS {
	case "darwin":
		return filepath.Join(m.Home, "Library", "Application Support")
	case "windows":
		if v := m.Getenv("APPDATA"); v != "" {
			return v
		}
		return filepath.Join(m.Home, "AppData", "Roaming")
	}
	if v := m.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(m.Home, ".config")
}

// Client is an MCP client whose user configuration file install edits.
type Client struct {
	Name  string // as typed on the command line: claude-desktop
	Title string // as the client calls itself: Claude Desktop

	key   string // the member that maps server names to entries
	typed bool   // entries carry "type": "stdio" (or "http")
	// urlKey is the member that holds the URL of a bridge serving HTTP:
	// "url", "serverUrl", or "" for a client that only starts commands.
	urlKey string
	// paths returns the client's own folder, there once the client has
	// run, and its configuration file.
	paths func(m Machine) (dir, file string)
}

// Paths returns the client's own folder on m, there once the client has
// run, and its configuration file.
func (c Client) Paths(m Machine) (dir, file string) { return c.paths(m) }

// Found tells whether the client has run on m.
func (c Client) Found(m Machine) bool {
	dir, file := c.paths(m)
	return exists(dir) || exists(file)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

var clients = []Client{
	{Name: "claude-desktop", Title: "Claude Desktop", key: "mcpServers", paths: func(m Machine) (string, string) {
		dir := filepath.Join(m.appData(), "Claude")
		return dir, filepath.Join(dir, "claude_desktop_config.json")
	}},
	{Name: "claude-code", Title: "Claude Code", key: "mcpServers", typed: true, urlKey: "url", paths: func(m Machine) (string, string) {
		if dir := m.Getenv("CLAUDE_CONFIG_DIR"); dir != "" {
			return dir, filepath.Join(dir, ".claude.json")
		}
		return filepath.Join(m.Home, ".claude"), filepath.Join(m.Home, ".claude.json")
	}},
	{Name: "cursor", Title: "Cursor", key: "mcpServers", urlKey: "url", paths: func(m Machine) (string, string) {
		dir := filepath.Join(m.Home, ".cursor")
		return dir, filepath.Join(dir, "mcp.json")
	}},
	{Name: "vscode", Title: "VS Code", key: "servers", typed: true, urlKey: "url", paths: func(m Machine) (string, string) {
		dir := filepath.Join(m.appData(), "Code", "User")
		return dir, filepath.Join(dir, "mcp.json")
	}},
	{Name: "windsurf", Title: "Windsurf", key: "mcpServers", urlKey: "serverUrl", paths: func(m Machine) (string, string) {
		dir := filepath.Join(m.Home, ".codeium", "windsurf")
		return dir, filepath.Join(dir, "mcp_config.json")
	}},
}

// Clients returns the clients whose files install edits, in the order
// they are listed.
func Clients() []Client { return append([]Client(nil), clients...) }

// Names returns the clients' names, in the order of Clients.
func Names() []string {
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.Name
	}
	return names
}
