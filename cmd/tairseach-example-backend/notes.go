package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Limits on notes, also stated in manifests-example/notes.json.
const (
	maxTitleLen     = 200
	maxBodyLen      = 100_000
	defaultListSize = 50
	maxListSize     = 1000
)

// note is one stored note, and the result of notes.create and notes.get.
type note struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
	// Label is what the user filed the note under (notes.label), if
	// anything.
	Label string `json:"label,omitempty"`
}

// noteSummary is one entry of notes.list.
type noteSummary struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	CreatedAt string `json:"created_at"`
	Label     string `json:"label,omitempty"`
}

// noteStore keeps notes durably, one JSON file per note (<id>.json, mode
// 0600) in one folder. Files are written to a temporary name and renamed,
// so a crash never leaves half a note. It is safe for concurrent use.
type noteStore struct {
	dir string
	log zerolog.Logger

	mu sync.RWMutex // readers list and get; writers create and delete
}

// openNoteStore returns a store over dir, creating dir (0700) if needed.
func openNoteStore(dir string, log zerolog.Logger) (*noteStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create notes folder: %w", err)
	}
	return &noteStore{dir: dir, log: log}, nil
}

func (s *noteStore) create(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	p, err := bind[struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
	}](params)
	if err != nil {
		return nil, err
	}
	title, err := required(p.Title, "title")
	if err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(title) == "":
		return nil, invalidParams("title must not be empty")
	case len(title) > maxTitleLen:
		return nil, invalidParams("title is %d bytes; at most %d allowed", len(title), maxTitleLen)
	}
	var body string
	if p.Body != nil {
		body = *p.Body
	}
	if len(body) > maxBodyLen {
		return nil, invalidParams("body is %d bytes; at most %d allowed", len(body), maxBodyLen)
	}
	return s.add(title, body)
}

// add stores a new note.
func (s *noteStore) add(title, body string) (note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := note{Title: title, Body: body, CreatedAt: time.Now().UTC().Format(time.RFC3339)}
	for {
		n.ID = newNoteID()
		if _, err := os.Lstat(s.path(n.ID)); errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err := s.write(n); err != nil {
		return note{}, err
	}
	return n, nil
}

func (s *noteStore) get(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	id, err := noteIDParam(params)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.read(id)
}

func (s *noteStore) delete(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	id, err := noteIDParam(params)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Remove(s.path(id)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, noteNotFound(id)
		}
		return nil, fmt.Errorf("delete note %s: %w", id, err)
	}
	return map[string]bool{"deleted": true}, nil
}

// noteList is the result of notes.list.
type noteList struct {
	Notes []noteSummary `json:"notes"`
	// Total counts every match, also those beyond the limit.
	Total int `json:"total"`
}

func (s *noteStore) list(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	p, err := bind[struct {
		Query *string  `json:"query"`
		Limit *integer `json:"limit"`
	}](params)
	if err != nil {
		return nil, err
	}
	limit := defaultListSize
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > maxListSize {
			return nil, invalidParams("limit must be between 1 and %d, got %d", maxListSize, *p.Limit)
		}
		limit = int(*p.Limit)
	}
	var query string
	if p.Query != nil {
		query = strings.ToLower(*p.Query)
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	all, err := s.newestFirst()
	if err != nil {
		return nil, err
	}
	matches := slices.DeleteFunc(all, func(n note) bool {
		return query != "" && !strings.Contains(strings.ToLower(n.Title), query) && !strings.Contains(strings.ToLower(n.Body), query)
	})
	out := noteList{Notes: []noteSummary{}, Total: len(matches)}
	for _, n := range matches[:min(limit, len(matches))] {
		out.Notes = append(out.Notes, noteSummary{ID: n.ID, Title: n.Title, CreatedAt: n.CreatedAt, Label: n.Label})
	}
	return out, nil
}

// newestFirst loads every note, newest first; the caller holds s.mu.
func (s *noteStore) newestFirst() ([]note, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("read notes folder: %w", err)
	}
	var notes []note
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !validNoteID(id) {
			continue
		}
		n, err := s.read(id)
		if err != nil {
			s.log.Warn().Err(err).Str("note", id).Msg("skipping unreadable note")
			continue
		}
		notes = append(notes, n)
	}
	// The id breaks ties within a second so the order is stable.
	slices.SortFunc(notes, func(a, b note) int {
		return cmp.Or(strings.Compare(b.CreatedAt, a.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return notes, nil
}

// maxCompletions bounds the values of notes.complete, as MCP does.
const maxCompletions = 100

// completion is the result of notes.complete, as tairseach-mcp reads it.
type completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total"`
	HasMore bool     `json:"hasMore"`
}

// complete completes an argument of a prompt or resource template for an
// MCP client, with the params tairseach-mcp sends: for "id", the ids of
// the notes that start with value; for any other argument, the titles
// that contain it, ignoring case. Newest first, at most maxCompletions.
func (s *noteStore) complete(ctx context.Context, params json.RawMessage, _ *peer) (any, error) {
	p, err := bind[struct {
		Argument  *string           `json:"argument"`
		Value     *string           `json:"value"`
		Arguments map[string]string `json:"arguments"`
	}](params)
	if err != nil {
		return nil, err
	}
	argument, err := required(p.Argument, "argument")
	if err != nil {
		return nil, err
	}
	var value string
	if p.Value != nil {
		value = *p.Value
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	notes, err := s.newestFirst()
	if err != nil {
		return nil, err
	}
	out := completion{Values: []string{}}
	for _, n := range notes {
		v := n.Title
		if argument == "id" {
			v = n.ID
		}
		switch {
		case argument == "id" && !strings.HasPrefix(v, value),
			argument != "id" && !strings.Contains(strings.ToLower(v), strings.ToLower(value)),
			slices.Contains(out.Values, v):
			continue
		}
		if out.Total++; len(out.Values) < maxCompletions {
			out.Values = append(out.Values, v)
		}
	}
	out.HasMore = out.Total > len(out.Values)
	return out, nil
}

// count returns the number of notes.
func (s *noteStore) count() (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	notes, err := s.newestFirst()
	return len(notes), err
}

// read loads one note; the caller holds s.mu.
func (s *noteStore) read(id string) (note, error) {
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return note{}, noteNotFound(id)
	}
	if err != nil {
		return note{}, fmt.Errorf("read note %s: %w", id, err)
	}
	var n note
	if err := json.Unmarshal(b, &n); err != nil {
		return note{}, fmt.Errorf("decode note %s: %w", id, err)
	}
	n.ID = id
	return n, nil
}

// write stores n atomically; the caller holds s.mu for writing.
func (s *noteStore) write(n note) error {
	b, err := json.MarshalIndent(n, "", "  ")
	if err != nil {
		return fmt.Errorf("encode note %s: %w", n.ID, err)
	}
	f, err := os.CreateTemp(s.dir, ".note-*.tmp") // CreateTemp makes it 0600
	if err != nil {
		return fmt.Errorf("write note %s: %w", n.ID, err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path(n.ID))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write note %s: %w", n.ID, err)
	}
	return nil
}

func (s *noteStore) path(id string) string { return filepath.Join(s.dir, id+".json") }

// noteIDParam reads the {"id": ...} params of notes.get and notes.delete.
func noteIDParam(params json.RawMessage) (string, error) {
	p, err := bind[struct {
		ID *string `json:"id"`
	}](params)
	if err != nil {
		return "", err
	}
	id, err := required(p.ID, "id")
	if err != nil {
		return "", err
	}
	if !validNoteID(id) {
		// Checked before the id becomes part of a file name.
		return "", invalidParams("id %q is not a note id (note ids are hex digits, as returned by notes.create or notes.list)", id)
	}
	return id, nil
}

func noteNotFound(id string) error {
	return &rpcError{Code: codeNotFound, Message: "note not found", Data: map[string]string{"id": id}}
}

// newNoteID returns 12 random hex digits.
func newNoteID() string {
	b := make([]byte, 6)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b)
}

func validNoteID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
