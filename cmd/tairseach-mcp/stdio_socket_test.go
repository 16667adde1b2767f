//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inetd, systemd's socket activation and socat start a server with one
// socket as its stdin and its stdout. A large response must arrive whole
// even when the client reads it late: the bridge must not leave its stdout
// non-blocking under a writer that expects it to block.
func TestOneSocketAsStdinAndStdout(t *testing.T) {
	be := backend(t)
	var tools, methods []string
	for i := range 1900 {
		tools = append(tools, fmt.Sprintf(`{"name":"t.tool_%04d","description":"%s","inputSchema":{"type":"object"}}`, i, strings.Repeat("Describes the tool at some length. ", 12)))
		methods = append(methods, fmt.Sprintf(`"t.tool_%04d":"notes.create"`, i))
	}
	dir := manifestDir(t, map[string]string{"many.json": `{"id":"many","tools":[` + strings.Join(tools, ",") + `],"implementation":{"methods":{` + strings.Join(methods, ",") + `}}}`})

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	client, server := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "server")
	defer client.Close()
	cmd := bridgeCmd(dir, be.Path, "--no-watch")
	cmd.Stdin, cmd.Stdout = server, server
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	server.Close()

	const lists = 3
	fmt.Fprintf(client, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	for i := 1; i <= lists; i++ {
		fmt.Fprintf(client, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i)
	}
	time.Sleep(300 * time.Millisecond) // the responses fill the socket's buffer meanwhile
	client.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReaderSize(client, 1<<20)
	for i := 0; i <= lists; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("response %d of %d: %v (%d bytes of it); stderr:\n%s", i, lists, err, len(line), stderr.String())
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":`, i); !strings.HasPrefix(line, want) {
			t.Fatalf("response %d: %.80s", i, line)
		}
		if i > 0 && strings.Count(line, `"inputSchema"`) != 1900 {
			t.Fatalf("response %d lists %d tools, want 1900", i, strings.Count(line, `"inputSchema"`))
		}
	}
	syscall.Shutdown(fds[0], syscall.SHUT_WR) // end of input
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bridge: %v; stderr:\n%s", err, stderr.String())
	}
}
