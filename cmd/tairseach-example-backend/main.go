// Command tairseach-example-backend is a small, real Tairseach backend: it
// serves notes, system information, a read-only view of one folder, a
// method that always refuses (secrets.read) and a method that is slow on
// purpose (debug.sleep) as newline-delimited JSON-RPC 2.0 over a Unix
// socket, following the backend contract that tairseach-mcp fronts. Some
// methods speak to the client while they work, as docs/backend-protocol.md
// allows (speak.go): progress and log messages, and questions for the
// client's model, its user and its roots. The manifests in
// manifests-example/ describe its methods as MCP tools.
//
// Usage:
//
//	tairseach-example-backend [-socket PATH] [-data DIR] [-files-root DIR] [-log-level LEVEL]
package main

import "os"

func main() { os.Exit(mainExit(os.Args[1:], os.Stderr)) }
