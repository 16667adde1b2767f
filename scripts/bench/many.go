package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The rows of many manifests measure what a large install costs: the
// time from start to the first tools/list, and the time a new tool takes
// to be served while another file is rewritten over and over (a
// "storm": an editor saving on every keystroke, a generator in a loop).

func (b *bench) manyStartRowName() string {
	return fmt.Sprintf("%d manifests: start to first tools/list", b.many)
}

func (b *bench) stormRowName() string {
	return fmt.Sprintf("new tool served during a one-file storm over %d manifests", b.many)
}

const (
	// manyStarts is how many times the start row starts a bridge.
	manyStarts = 5
	// stormEvery is how often the storm rewrites its file; it is
	// shorter than the bridge's debounce delay, so its events never stop.
	stormEvery = 50 * time.Millisecond
	// stormTrials is how many new tools the storm row adds, one at a
	// time, stormPause apart: the pause is no multiple of the bridge's
	// reload rhythm, so the trials fall at different points of it.
	stormTrials = 10
	stormPause  = 700 * time.Millisecond
	// stormWithin bounds the wait for each new tool.
	stormWithin = 30 * time.Second
)

// manyCmd is the command line of a bridge serving sock from dir.
func (b *bench) manyCmd(sock, dir string) []string {
	argv := b.bridgeCmd(sock)
	argv[slices.Index(argv, b.manifests)] = dir
	return argv
}

// writeMany writes n manifest files of one filler tool each into dir.
func writeMany(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, manyFile(i)), manyManifest(fmt.Sprintf("many%d.tool", i), i, 0), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func manyFile(i int) string { return fmt.Sprintf("m%05d.json", i) }

// manyManifest is a manifest of one filler tool called name, whose title
// says gen.
func manyManifest(name string, i, gen int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"name":"Filler","version":"1.0.0","tools":[%s],"implementation":{"methods":{%q:"echo"}}}`,
		name, fillerTool(name, i, gen), name)
}

// manyStartup starts a bridge over b.many manifests runs times and
// measures the time from the start to the first tools/list response (its
// first page), which waits for the manifests to load. Each run then pages
// through the list, unmeasured, to check that every tool is there.
func (b *bench) manyStartup(sock string, runs int) (stats, error) {
	dir := filepath.Join(b.work, "many")
	if err := writeMany(dir, b.many); err != nil {
		return stats{}, err
	}
	argv := b.manyCmd(sock, dir)
	var lat []time.Duration
	errs := 0
	for range runs {
		t0 := time.Now()
		c, err := startClient(argv)
		if err != nil {
			return stats{}, err
		}
		_, err = c.roundTrip(initializeRequest)
		var first []byte
		if err == nil {
			c.w.WriteString(initializedNotification + "\n")
			first, err = c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
			lat = append(lat, time.Since(t0))
		}
		var n int
		if err == nil {
			n, err = c.countTools(first)
		}
		if cerr := c.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return stats{}, err
		}
		if n != b.many {
			errs++
		}
	}
	return summarise(b.manyStartRowName(), lat, errs, 0), nil
}

// countTools counts the tools of a tools/list whose first page is first,
// asking for the pages that follow.
func (c *client) countTools(first []byte) (int, error) {
	n := 0
	for page := first; ; {
		var resp struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(page, &resp); err != nil {
			return 0, fmt.Errorf("tools/list response: %w", err)
		}
		n += len(resp.Result.Tools)
		if resp.Result.NextCursor == "" {
			return n, nil
		}
		cursor, _ := json.Marshal(resp.Result.NextCursor)
		var err error
		if page, err = c.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{"cursor":` + string(cursor) + `}}`); err != nil {
			return 0, err
		}
	}
}

// storm starts a bridge over b.many manifests, rewrites one of them every
// stormEvery, and meanwhile adds stormTrials new manifests, one at a
// time, each with a tool of its own. It measures the time from each new
// file's creation to the first tools/list that has its tool, listing
// again after each notifications/tools/list_changed. The new files sort
// first, so their tools are on the list's first page.
func (b *bench) storm(sock string) (stats, error) {
	dir := filepath.Join(b.work, "storm")
	if err := writeMany(dir, b.many); err != nil {
		return stats{}, err
	}
	c, err := ready(b.manyCmd(sock, dir))
	if err != nil {
		return stats{}, err
	}
	c.w.WriteString(initializedNotification + "\n")
	if err := c.w.Flush(); err != nil {
		c.close()
		return stats{}, err
	}

	stop, stopped := make(chan struct{}), make(chan error, 1)
	// This goroutine rewrites the first file until stop is closed, then
	// reports on stopped.
	go func() {
		tick := time.NewTicker(stormEvery)
		defer tick.Stop()
		for gen := 1; ; gen++ {
			select {
			case <-stop:
				stopped <- nil
				return
			case <-tick.C:
			}
			if err := os.WriteFile(filepath.Join(dir, manyFile(0)), manyManifest("many0.tool", 0, gen), 0o644); err != nil {
				stopped <- err
				return
			}
		}
	}()
	var lat []time.Duration
	errs := 0
	time.Sleep(time.Second) // the storm under way
	for k := range stormTrials {
		name := fmt.Sprintf("fresh.tool_%d", k)
		t0 := time.Now()
		if err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("a-fresh%02d.json", k)), manyManifest(name, k, 0), 0o644); err != nil {
			break
		}
		var listed bool
		if listed, err = c.waitListed("tairseach_"+strings.ReplaceAll(name, ".", "_"), t0.Add(stormWithin)); err != nil {
			break
		}
		lat = append(lat, time.Since(t0))
		if !listed {
			errs++
		}
		time.Sleep(stormPause)
	}
	close(stop)
	if serr := <-stopped; err == nil {
		err = serr
	}
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return summarise(b.stormRowName(), lat, errs, 0), err
}

// waitListed lists the tools until the first page names tool, listing
// again after each notifications/tools/list_changed, until deadline. It
// reports whether the tool was listed in time.
func (c *client) waitListed(tool string, deadline time.Time) (bool, error) {
	c.stdout.SetReadDeadline(deadline)
	defer c.stdout.SetReadDeadline(time.Now().Add(replyWithin))
	want := []byte(`"name":"` + tool + `"`)
	changed := []byte(`"notifications/tools/list_changed"`)
	for {
		id, err := c.send(func(id int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id)
		}, true)
		if err != nil {
			return false, err
		}
		// A change announced while the list was on its way may be one
		// the list does not have yet.
		again := false
		for {
			line, err := c.r.ReadBytes('\n')
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			if bytes.Contains(line, changed) {
				again = true
				continue
			}
			if got, ok := responseID(line); ok && got == id {
				if bytes.Contains(line, want) {
					return true, nil
				}
				break
			}
		}
		for !again {
			line, err := c.r.ReadBytes('\n')
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			again = bytes.Contains(line, changed)
		}
	}
}
