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

	"golang.org/x/sys/unix"
)

// inetd, systemd's socket activation and socat start a server with one
// socket as its stdin and its stdout. A large response must arrive whole
// even when the client reads it late: the bridge must not leave its stdout
// non-blocking under a writer that expects it to block.
// socketPair returns the two ends of a connected pair of Unix sockets.
// They are close-on-exec, or a bridge (this test's or another's, running
// in parallel) would hold the ends open (SOCK_CLOEXEC is Linux's;
// ForkLock keeps an exec from inheriting them before they are marked).
func socketPair(t *testing.T) (mine, theirs *os.File) {
	t.Helper()
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
}

func TestOneSocketAsStdinAndStdout(t *testing.T) {
	t.Parallel()
	be := backend(t)
	var tools, methods []string
	for i := range 1900 {
		tools = append(tools, fmt.Sprintf(`{"name":"t.tool_%04d","description":"%s","inputSchema":{"type":"object"}}`, i, strings.Repeat("Describes the tool at some length. ", 12)))
		methods = append(methods, fmt.Sprintf(`"t.tool_%04d":"notes.create"`, i))
	}
	dir := manifestDir(t, map[string]string{"many.json": `{"id":"many","tools":[` + strings.Join(tools, ",") + `],"implementation":{"methods":{` + strings.Join(methods, ",") + `}}}`})

	client, server := socketPair(t)
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
	if rc, err := client.SyscallConn(); err == nil { // end of input
		rc.Control(func(fd uintptr) { syscall.Shutdown(int(fd), syscall.SHUT_WR) })
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bridge: %v; stderr:\n%s", err, stderr.String())
	}
}

// Clients start the bridge with pipes (Go's os/exec, Python) or with a
// socket for stdin and another for stdout (Node's child_process, so
// Claude Desktop and the Inspector). Either way it must serve, and leave
// the description of the stdin it inherited as it found it: a wrapper
// that started the bridge may share it.
func TestStdinAsClientsGiveIt(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	for _, kind := range []string{"pipes", "sockets"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var inW, inR, outR, outW *os.File
			var err error
			if kind == "pipes" {
				if inR, inW, err = os.Pipe(); err != nil {
					t.Fatal(err)
				}
				if outR, outW, err = os.Pipe(); err != nil {
					t.Fatal(err)
				}
			} else {
				inW, inR = socketPair(t)
				outR, outW = socketPair(t)
			}
			defer inW.Close()
			defer inR.Close() // kept open, as a wrapper process would
			defer outR.Close()
			cmd := bridgeCmd(dir, be.Path, "--no-watch", "--log-level", "info")
			cmd.Stdin, cmd.Stdout = inR, outW // os/exec hands them over blocking
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			outW.Close()

			fmt.Fprint(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
			fmt.Fprint(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")
			for i := 2; i < 12; i++ {
				fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"n%d"}}}`+"\n", i, i)
			}
			outR.SetReadDeadline(time.Now().Add(20 * time.Second))
			r := bufio.NewReader(outR)
			got := map[int]string{}
			for range 12 {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("after %d responses: %v; stderr:\n%s", len(got), err, stderr.String())
				}
				var id int
				if _, err := fmt.Sscanf(line, `{"jsonrpc":"2.0","id":%d,"result":`, &id); err != nil || got[id] != "" {
					t.Fatalf("unexpected response: %.200s", line)
				}
				got[id] = line
			}
			for i := 2; i < 12; i++ {
				if !strings.Contains(got[i], fmt.Sprintf(`"title":"n%d"`, i)) {
					t.Errorf("response %d: %.200s", i, got[i])
				}
			}
			inW.Close() // end of input
			if err := cmd.Wait(); err != nil {
				t.Fatalf("bridge: %v; stderr:\n%s", err, stderr.String())
			}
			rc, err := inR.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var flags int
			rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
			if err != nil {
				t.Fatal(err)
			}
			if flags&unix.O_NONBLOCK != 0 {
				t.Error("the inherited stdin was left non-blocking")
			}
		})
	}
}
