package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// tokenMethod states how estimateTokens counts, for the help and the
// output. scripts/interop/tokens.mjs holds it within 15% of the o200k_base
// and cl100k_base encodings on every tool of the example manifests and of
// registry/testdata/catalogue.
const tokenMethod = "tokens estimated from character classes: 1.1 per word of letters, " +
	"0.4 more per letter past the 8th of a word, 0.5 per digit, 0.25 per punctuation mark " +
	"and 1 per other character; spaces are free (within 15% of OpenAI's o200k_base and " +
	"cl100k_base BPE encodings on the example manifests)"

// estimateTokens estimates the BPE tokens of text, JSON of a tool list
// above all; see tokenMethod.
func estimateTokens(text string) int {
	var hundredths, word int
	endWord := func() {
		if word > 0 {
			hundredths += 110 + 40*max(0, word-8)
		}
		word = 0
	}
	for _, r := range text {
		if r < 0x80 && unicode.IsLetter(r) {
			word++
			continue
		}
		endWord()
		switch {
		case unicode.IsDigit(r):
			hundredths += 50
		case unicode.IsSpace(r):
		case r < 0x80:
			hundredths += 25
		default:
			hundredths += 100
		}
	}
	endWord()
	return (hundredths + 50) / 100
}

// toolCost is what one tool of the list costs a client.
type toolCost struct {
	Name   string `json:"name"`
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
}

// listCost is what a client receives for the tool list: each tool's JSON
// in the tools/list response, and the whole response.
type listCost struct {
	Tools  []toolCost `json:"tools"`
	Bytes  int        `json:"bytes"`
	Tokens int        `json:"tokens"`
	Method string     `json:"method"`
}

// measureList asks tools for its list as a client of the newest protocol
// version would, through the same server code, and measures the response.
func measureList(ctx context.Context, tools protocol.ToolProvider) (*listCost, error) {
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n", protocol.ModernVersion)
	var out bytes.Buffer
	srv := &protocol.Server{Info: serverInfo(), Tools: tools}
	if err := srv.Serve(ctx, strings.NewReader(req), &out); err != nil {
		return nil, err
	}
	line := strings.TrimSpace(out.String())
	var resp struct {
		Result struct {
			Tools []jsontext.Value `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil {
		return nil, fmt.Errorf("read the tools/list response: %w", err)
	}
	c := &listCost{Tools: []toolCost{}, Bytes: len(line), Tokens: estimateTokens(line), Method: tokenMethod}
	for _, raw := range resp.Result.Tools {
		var t struct {
			Name string `json:"name"`
		}
		json.Unmarshal(raw, &t)
		c.Tools = append(c.Tools, toolCost{t.Name, len(raw), estimateTokens(string(raw))})
	}
	return c, nil
}

func printCost(e *env, c *listCost) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBYTES\tTOKENS")
	for _, t := range c.Tools {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", t.Name, t.Bytes, t.Tokens)
	}
	fmt.Fprintf(tw, "(the whole tools/list response)\t%d\t%d\n", c.Bytes, c.Tokens)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%s, as a client of MCP %s receives them; tokens are estimates ('tairseach-mcp tools --help' says how)\n",
		plural(len(c.Tools), "tool"), protocol.ModernVersion)
	return nil
}
