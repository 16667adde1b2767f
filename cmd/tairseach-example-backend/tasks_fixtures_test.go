package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// speak sends one request and reads everything the backend writes until
// its response: its notifications, its questions (answered with answers,
// by id), and the response.
func (c *client) speak(req string, answers map[string]string) (notes, questions []string, resp reply) {
	c.t.Helper()
	c.send(req)
	for {
		line := c.recv()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("%s: %v", line, err)
		}
		switch {
		case m.Method != "" && m.ID == nil:
			notes = append(notes, line)
		case m.Method != "":
			questions = append(questions, line)
			var id string
			json.Unmarshal(m.ID, &id)
			c.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + answers[id] + `}`)
		default:
			if err := json.Unmarshal([]byte(line), &resp); err != nil {
				c.t.Fatal(err)
			}
			return notes, questions, resp
		}
	}
}

// notes.import creates the notes one by one, reporting progress after
// each, then logs; the fixtures speak as their scenarios need: progress before a
// long part, questions once the work has begun or before it, answers
// read back.
func TestTheMethodsThatRunLongSpeak(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.dial(t)

	notes, _, resp := c.speak(`{"jsonrpc":"2.0","id":1,"method":"notes.import","params":{"count":3,"delay_ms":0}}`, nil)
	var imported struct {
		Imported int      `json:"imported"`
		IDs      []string `json:"ids"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &imported) != nil || imported.Imported != 3 || len(imported.IDs) != 3 {
		t.Fatalf("notes.import: %+v %s", resp.Error, resp.Result)
	}
	if len(notes) != 4 || !strings.Contains(notes[2], `"3 of 3 notes"`) || !strings.Contains(notes[3], `"imported 3 notes"`) {
		t.Errorf("notes.import's progress: %q", notes)
	}
	if listed := result[struct{ Total int }](t, c, "notes.list", nil); listed.Total != 3 {
		t.Errorf("%d notes after the import, want 3", listed.Total)
	}

	for _, tt := range []struct {
		name, req string
		answers   map[string]string
		questions int
		want      string
	}{
		{"greet", `{"jsonrpc":"2.0","id":2,"method":"fixtures.greet","params":{"name":"Ann"}}`, nil, 0, `"Hello, Ann!"`},
		{"slow_compute of no seconds", `{"jsonrpc":"2.0","id":3,"method":"fixtures.slow_compute","params":{"seconds":0,"label":"x"}}`, nil, 0, `"Computed x in 0 s."`},
		{"confirm_delete, yes", `{"jsonrpc":"2.0","id":4,"method":"fixtures.confirm_delete","params":{"filename":"a.txt"}}`,
			map[string]string{"delete": `{"action":"accept","content":{"confirm":true}}`}, 1, `"Deleted a.txt."`},
		{"confirm_delete, declined", `{"jsonrpc":"2.0","id":5,"method":"fixtures.confirm_delete","params":{"filename":"a.txt"}}`,
			map[string]string{"delete": `{"action":"decline"}`}, 1, `"Kept a.txt."`},
		{"multi_input", `{"jsonrpc":"2.0","id":6,"method":"fixtures.multi_input"}`,
			map[string]string{"first": `{"action":"accept","content":{"name":"A"}}`, "second": `{"action":"accept","content":{"name":"B"}}`}, 2, `"Got A and B."`},
		{"ask_then_compute", `{"jsonrpc":"2.0","id":7,"method":"fixtures.ask_then_compute"}`,
			map[string]string{"user_name": `{"action":"accept","content":{"name":"Alice"}}`}, 1, `"Hello, Alice!"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, questions, resp := c.speak(tt.req, tt.answers)
			if resp.Error != nil || string(resp.Result) != tt.want || len(questions) != tt.questions {
				t.Errorf("%d questions, %+v %s; want %d, %s", len(questions), resp.Error, resp.Result, tt.questions, tt.want)
			}
		})
	}
	if _, _, resp := c.speak(`{"jsonrpc":"2.0","id":8,"method":"fixtures.failing_job"}`, nil); resp.Error == nil || !strings.Contains(resp.Error.Message, "the job failed") {
		t.Errorf("failing_job: %+v", resp)
	}
	if _, _, resp := c.speak(`{"jsonrpc":"2.0","id":9,"method":"fixtures.large_result","params":{"kilobytes":1}}`, nil); resp.Error != nil || len(resp.Result) != 1024+2 {
		t.Errorf("large_result: %+v, %d bytes", resp.Error, len(resp.Result))
	}
}
