//go:build unix

package main

// End-to-end tests of the HTTP bridge's safety and limits, through the
// built binary and its flags: requests written by hand, on loopback or a
// Unix socket.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// post sends an MCP POST written by hand and returns the reply read whole.
func post(t *testing.T, hc *http.Client, url string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if h, ok := header["Host"]; ok {
		req.Host = h
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST: reading the reply: %v", err)
	}
	return resp, string(b)
}

// An address others can reach is refused at start without a token, and
// without TLS unless --insecure-http says so: nothing is served.
func TestHTTPRefusesAnUnsafeListener(t *testing.T) {
	t.Parallel()
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	for _, tt := range []struct {
		name  string
		token bool
		want  string
	}{
		{"without a token", false, "--listen 0.0.0.0:0 is reachable from other machines: set a bearer token with --auth-token-file (or TAIRSEACH_AUTH_TOKEN) first"},
		{"with a token, without TLS", true, "--listen 0.0.0.0:0 is reachable from other machines: serve HTTPS with --tls-cert and --tls-key, or say --insecure-http"},
	} {
		cmd := bridgeCmd(dir, "/nonexistent.sock", "--transport", "http", "--listen", "0.0.0.0:0")
		if tt.token {
			cmd.Env = append(cmd.Env, "TAIRSEACH_AUTH_TOKEN=s3cret")
		}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%s: exit %v, want status 2", tt.name, err)
		}
		if !strings.Contains(string(out), tt.want) || strings.Contains(string(out), "serving MCP") {
			t.Errorf("%s: said %q, want %q and nothing served", tt.name, out, tt.want)
		}
	}
}

// With a token, every request but the health check needs it; the token
// never shows in the log, even at trace level. Origins and hosts named by
// their variables are allowed, exactly.
func TestHTTPTokenAndNamedOrigins(t *testing.T) {
	t.Parallel()
	const token, wrong = "tok-7d1e0b5a9c", "tok-00000wrong"
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := bridgeCmd(dir, be.Path, "--transport", "http", "--listen", "127.0.0.1:0", "--log-level", "trace", "--audit-log", auditLog)
	cmd.Env = append(cmd.Env, "TAIRSEACH_AUTH_TOKEN="+token, "TAIRSEACH_ALLOWED_ORIGINS=https://app.example,https://other.example", "TAIRSEACH_ALLOWED_HOSTS=bridge.lan")
	b := startHTTP(t, cmd)
	if !strings.Contains(b.log(), "(loopback only, bearer token required, 2 more origins allowed)") {
		t.Errorf("the start line does not say who may connect:\n%s", b.log())
	}
	hc := &http.Client{}
	bearer := map[string]string{"Authorization": "Bearer " + token}
	with := func(m map[string]string) map[string]string {
		out := map[string]string{"Authorization": "Bearer " + token}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"no token", nil, 401},
		{"a wrong token", map[string]string{"Authorization": "Bearer " + wrong}, 401},
		{"the token", bearer, 200},
		{"a named origin", with(map[string]string{"Origin": "https://app.example"}), 200},
		{"another named origin", with(map[string]string{"Origin": "https://other.example"}), 200},
		{"a named origin's subdomain", with(map[string]string{"Origin": "https://x.app.example"}), 403},
		{"a named host", with(map[string]string{"Host": "bridge.lan"}), 200},
		{"a host ending like the named one", with(map[string]string{"Host": "evil-bridge.lan"}), 403},
	} {
		resp, body := post(t, hc, b.url, tt.header, initializeBody)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.status)
		}
		if tt.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", tt.name, resp.Header.Get("WWW-Authenticate"))
		}
		if tt.status == 200 {
			sid := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "Authorization": "Bearer " + token}
			call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"t"}}}`
			if resp, body := post(t, hc, b.url, sid, call); resp.StatusCode != 200 || !strings.Contains(body, `"title":"t"`) {
				t.Errorf("%s: a call: %d %s", tt.name, resp.StatusCode, body)
			}
		}
	}
	if resp, err := hc.Get(strings.TrimSuffix(b.url, "/mcp") + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("the health check without a token: %v %v", resp, err)
	}
	b.cmd.Process.Signal(syscall.SIGTERM)
	<-b.exited
	log := b.log()
	if strings.Contains(log, token) || strings.Contains(log, wrong) {
		t.Errorf("a token is in the log:\n%s", log)
	}
	if !strings.Contains(log, "request refused") || !strings.Contains(log, "backend request") {
		t.Errorf("the trace log lacks the refusals or the calls:\n%s", log)
	}
	// Each call is recorded as the token's holder's, named by a digest.
	sum := sha256.Sum256([]byte(token))
	es := auditEntries(t, auditLog)
	if len(es) != 4 {
		t.Errorf("%d audit entries, want one per call (4)", len(es))
	}
	for _, e := range es {
		if want := "token:" + hex.EncodeToString(sum[:8]); e.Principal != want {
			t.Errorf("an entry's principal is %q, want %q", e.Principal, want)
		}
	}
	if data, _ := os.ReadFile(auditLog); bytes.Contains(data, []byte(token)) {
		t.Error("the token is in the audit log")
	}
}

// A Unix-socket listener is created 0600, serves processes of the same
// user, and is removed at the end.
func TestHTTPOverAUnixSocket(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	short, err := os.MkdirTemp("", "th")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	sock := filepath.Join(short, "b.sock")
	b := startHTTP(t, bridgeCmd(dir, be.Path, "--transport", "http", "--listen", "unix:"+sock))
	if want := "serving MCP on unix:" + sock + " http://localhost/mcp (this user only, no token)"; !strings.Contains(b.log(), want) {
		t.Errorf("start line: want %q in\n%s", want, b.log())
	}
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket: %v, %v; want a socket of mode 0600", fi.Mode(), err)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, body := post(t, hc, b.url, nil, initializeBody)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize over the socket: %d %s", resp.StatusCode, body)
	}
	sid := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}
	if resp, body := post(t, hc, b.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != 200 || !strings.Contains(body, "tairseach_notes_create") {
		t.Errorf("tools/list over the socket: %d %s", resp.StatusCode, body)
	}
	b.cmd.Process.Signal(syscall.SIGTERM)
	<-b.exited
	b.cmd.Wait()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is left behind: %v", err)
	}
}

// With --tls-cert and --tls-key the bridge serves HTTPS.
func TestHTTPOverTLS(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	certFile, keyFile, pool := selfSigned(t)
	b := startHTTPBridge(t, dir, be.Path, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(b.url, "https://127.0.0.1:") {
		t.Fatalf("serving on %s, want https", b.url)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if resp, body := post(t, hc, b.url, nil, initializeBody); resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("initialize over TLS: %d %s", resp.StatusCode, body)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// the files and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tairseach-mcp test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// A client that never finishes its headers (slow loris) is cut off after
// --header-timeout; an idle keep-alive connection after --idle-timeout.
func TestHTTPSlowAndIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path, "--header-timeout", "200ms", "--idle-timeout", "200ms")
	addr := strings.TrimSuffix(strings.TrimPrefix(b.url, "http://"), "/mcp")
	closed := func(what string, conn net.Conn, r io.Reader) {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, r); err != nil {
			t.Errorf("%s: the connection was not closed: %v", what, err)
		}
	}

	loris, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer loris.Close()
	io.WriteString(loris, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\n") // and never the rest
	closed("a client that never finishes its headers", loris, loris)

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health check: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	closed("an idle keep-alive connection", idle, br)
}

// A connection opened past --max-connections gets 503 and is closed;
// the connections within it are served.
func TestHTTPConnectionsPastTheLimitAreRefused(t *testing.T) {
	t.Parallel()
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path, "--max-connections", "2")
	addr := strings.TrimSuffix(strings.TrimPrefix(b.url, "http://"), "/mcp")
	health := func() (*http.Response, string) {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() }) // kept open until then
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.Close {
			if _, err := br.ReadByte(); err != io.EOF {
				t.Errorf("a connection said to close is open: %v", err)
			}
		}
		return resp, string(body)
	}
	for range 2 {
		if resp, body := health(); resp.StatusCode != http.StatusOK {
			t.Fatalf("a connection within the limit: %d %s", resp.StatusCode, body)
		}
	}
	if resp, body := health(); resp.StatusCode != http.StatusServiceUnavailable || !resp.Close || !strings.Contains(body, "too many connections open") {
		t.Errorf("a connection past the limit: %d, closing %t, %s", resp.StatusCode, resp.Close, body)
	}
}

// A session no client uses for --session-timeout ends, and its call in
// flight (whose client hung up) is cancelled at the backend.
func TestHTTPSessionTimeoutEndsAbandonedSessions(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	be := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return nil, ctx.Err()
	})
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path, "--session-timeout", "1s", "--call-timeout", "1m", "--log-level", "debug")
	hc := &http.Client{}
	resp, body := post(t, hc, b.url, nil, initializeBody)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sid := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}
	ctx, hangUp := context.WithCancel(t.Context())
	go func() { // ends when the client hangs up
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"t"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid["Mcp-Session-Id"])
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, started, "the call at the backend")
	hangUp()
	b.waitLog(t, "session ended: idle past the timeout")
	waitFor(t, cancelled, "the call's cancellation at the backend")
	if resp, body := post(t, hc, b.url, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); resp.StatusCode != 404 {
		t.Errorf("ping to the ended session: %d %s", resp.StatusCode, body)
	}
}

// waitFor receives from ch, failing the test after 15 s.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// On SIGTERM the bridge refuses new requests with 503, closes its event
// streams (a listen stream with its result), answers the call in flight,
// and exits 0.
func TestHTTPShutdownOnSIGTERM(t *testing.T) {
	t.Parallel()
	started, gate := make(chan struct{}, 1), make(chan struct{})
	be := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		started <- struct{}{}
		<-gate
		return map[string]any{"id": "n1", "title": "after the signal"}, nil
	})
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path)
	hc := &http.Client{}
	resp, body := post(t, hc, b.url, nil, initializeBody)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	sid := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id")}

	// A stream read to its end, in the background.
	stream := func(method, body string, header map[string]string) <-chan string {
		req, _ := http.NewRequestWithContext(t.Context(), method, b.url, strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s %s: %v %v", method, body, resp, err)
		}
		ended := make(chan string, 1)
		go func() { // ends with the stream
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ended <- string(b)
		}()
		return ended
	}
	get := stream(http.MethodGet, "", sid)
	listen := stream(http.MethodPost, `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	answered := make(chan string, 1)
	go func() { // ends when the call is answered
		_, body := post(t, hc, b.url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_notes_create","arguments":{"title":"t"}}}`)
		answered <- body
	}()
	waitFor(t, started, "the call at the backend")

	b.cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, get, "the GET stream's end")
	if evs := waitFor(t, listen, "the listen stream's end"); !strings.Contains(evs, `"id":"l","result"`) {
		t.Errorf("the listen stream ended without its result: %q", evs)
	}
	if resp, body := post(t, hc, b.url, sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a request while shutting down: %d %s", resp.StatusCode, body)
	}
	close(gate)
	if body := waitFor(t, answered, "the call's answer"); !strings.Contains(body, "after the signal") {
		t.Errorf("the call in flight: %s", body)
	}
	<-b.exited
	if err := b.cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, b.log())
	}
}
