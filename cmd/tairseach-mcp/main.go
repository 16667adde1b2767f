// Command tairseach-mcp serves the tools of a local Tairseach backend to
// MCP clients over stdio. See the README for usage.
package main

import (
	"os"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/cli"
)

func main() { os.Exit(cli.Main()) }
