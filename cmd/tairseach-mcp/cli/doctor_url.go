package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
)

// urlCheckTimeout bounds the request doctor makes to a bridge serving HTTP.
const urlCheckTimeout = 3 * time.Second

// checkURLEntry checks an entry that reaches a bridge serving HTTP: it
// asks the bridge at the entry's URL, with the entry's headers, what it
// serves (server/discover, which opens no session), as the client would.
func checkURLEntry(ctx context.Context, r result, path string, c clientconfig.Client, u clientconfig.URLEntry) result {
	where := u.Where()
	reinstall := "tairseach-mcp install " + c.Name + " --url " + where + " --force, with TAIRSEACH_AUTH_TOKEN set as the bridge's"
	ctx, cancel := context.WithTimeout(ctx, urlCheckTimeout)
	defer cancel()
	const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, where, strings.NewReader(discover))
	if err != nil {
		return r.fail(fmt.Sprintf("%s: the URL %s: %v", path, where, err), reinstall)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "server/discover")
	for k, v := range u.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var msg string
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			msg = fmt.Sprintf("no answer from %s within %s", where, urlCheckTimeout)
		default:
			msg = fmt.Sprintf("nothing answers at %s", where)
		}
		return r.fail(path+": "+msg, "start the HTTP bridge: tairseach-mcp --transport http (docs/http.md shows how to keep it running)")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var reply struct {
		Result struct {
			Meta struct {
				ServerInfo struct {
					Name, Version string
				} `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &reply, json.MatchCaseInsensitiveNames(true))
	why := resp.Status
	if reply.Error != nil {
		why += ": " + reply.Error.Message
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized && u.Headers == nil:
		return r.fail(fmt.Sprintf("%s: the bridge at %s wants a token, and the entry has none", path, where), reinstall)
	case resp.StatusCode == http.StatusUnauthorized:
		return r.fail(fmt.Sprintf("%s: the bridge at %s refuses the entry's token", path, where), reinstall)
	case resp.StatusCode == http.StatusForbidden:
		return r.fail(fmt.Sprintf("%s: the bridge at %s refuses the client (%s)", path, where, why), "name the host with the bridge's --allowed-hosts (docs/http.md)")
	case resp.StatusCode != http.StatusOK || reply.Result.Meta.ServerInfo.Name == "":
		return r.fail(fmt.Sprintf("%s: %s does not answer as an MCP bridge (%s)", path, where, why), "check the URL: the HTTP bridge serves /mcp, and says where when it starts")
	}
	info := reply.Result.Meta.ServerInfo
	return r.ok(fmt.Sprintf("%s: reaches %s (%s %s)", path, where, info.Name, info.Version))
}
