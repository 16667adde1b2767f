package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Prompt is one entry of a manifest's prompts array: messages with
// {argument} placeholders, filled in when a client gets the prompt.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Arguments   []PromptArgument `json:"arguments"`
	Messages    []PromptMessage  `json:"messages"`
	// Complete maps an argument to the backend method that completes it.
	Complete map[string]string `json:"complete"`

	// Index is the prompt's position in the manifest's prompts array.
	Index int `json:"-"`
	// Broken is true when the prompt has an error-level problem: it is not
	// served, and its fields may be incomplete (Name is set when the
	// manifest gives one).
	Broken bool `json:"-"`
}

// PromptArgument is one argument of a prompt. Its value is a string.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	Required    bool   `json:"required,omitzero"`
}

// PromptMessage is one message of a prompt: Text, or the contents of the
// resource at the URI Resource names, read when the prompt is fetched.
// Both may hold {argument} placeholders.
type PromptMessage struct {
	Role     string  `json:"role"`
	Text     *string `json:"text,omitzero"`
	Resource string  `json:"resource,omitzero"`
}

// Path returns the JSON path of the prompt in its manifest, e.g. prompts[1].
func (p *Prompt) Path() string { return fmt.Sprintf("prompts[%d]", p.Index) }

// Argument returns the argument called name.
func (p *Prompt) Argument(name string) (PromptArgument, bool) {
	i := slices.IndexFunc(p.Arguments, func(a PromptArgument) bool { return a.Name == name })
	if i < 0 {
		return PromptArgument{}, false
	}
	return p.Arguments[i], true
}

// Fill replaces each {name} in s that names one of the prompt's arguments
// by the argument's value in args ("" when absent); other braces are
// left as they are.
func (p *Prompt) Fill(s string, args map[string]string) string {
	return FillTemplate(s, func(name string) string {
		if _, ok := p.Argument(name); ok {
			return args[name]
		}
		return "{" + name + "}"
	})
}

// unknownPlaceholders returns the names in {braces} in s that name no
// argument of the prompt.
func (p *Prompt) unknownPlaceholders(s string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		if _, ok := p.Argument(m[1]); !ok && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// prompts decodes and checks the manifest's prompts.
func (p *parser) prompts(m *Manifest, elems []jsontext.Value, uses *methodUses) {
	seen := map[string]int{}
	for i, raw := range elems {
		pr := &Prompt{Index: i}
		m.Prompts = append(m.Prompts, pr)
		fail := func(path, format string, args ...any) {
			if !pr.Broken {
				pr.Broken = true
				if pr.Name == "" {
					pr.Name = memberOf(raw, "name")
				}
			}
			p.addItem(Error, joinPath(pr.Path(), path), item{prompt: pr.Name}, format, args...)
		}
		if _, ok := p.element(raw, manifestSchemas().prompt, pr, fail); !ok {
			continue
		}
		if first, dup := seen[pr.Name]; dup {
			fail("name", "duplicate prompt name %q (first declared at prompts[%d]); not served", pr.Name, first)
			continue
		}
		seen[pr.Name] = i
		for j, a := range pr.Arguments {
			if k := slices.IndexFunc(pr.Arguments[:j], func(b PromptArgument) bool { return b.Name == a.Name }); k >= 0 {
				fail(fmt.Sprintf("arguments[%d].name", j), "argument %q is declared twice (first at arguments[%d])", a.Name, k)
			}
		}
		for j, msg := range pr.Messages {
			p.message(pr, j, msg, fail)
		}
		for _, name := range slices.Sorted(maps.Keys(pr.Complete)) {
			if _, ok := pr.Argument(name); !ok {
				fail("complete."+name, "%q is not an argument of the prompt", name)
				continue
			}
			uses.check(pr.Complete[name], "complete."+name, fail)
		}
		if !pr.Broken && strings.TrimSpace(pr.Description) == "" {
			p.addItem(Warning, pr.Path()+".description", item{prompt: pr.Name}, "empty description: clients show it to people choosing a prompt")
		}
	}
}

// message checks the message at index j of a prompt.
func (p *parser) message(pr *Prompt, j int, msg PromptMessage, fail func(path, format string, args ...any)) {
	path := fmt.Sprintf("messages[%d]", j)
	switch {
	case (msg.Text != nil) == (msg.Resource != ""):
		fail(path, "a message needs exactly one of text and resource")
	case msg.Text != nil:
		for _, name := range pr.unknownPlaceholders(*msg.Text) {
			p.addItem(Warning, joinPath(pr.Path(), path+".text"), item{prompt: pr.Name},
				"{%s} names no argument of the prompt; it is sent as it is", name)
		}
	default:
		if unknown := pr.unknownPlaceholders(msg.Resource); len(unknown) > 0 {
			fail(path+".resource", "{%s} names no argument of the prompt", unknown[0])
			return
		}
		// A URI that is a placeholder from its start is checked when it
		// is read; the others must be URIs whatever the arguments.
		if strings.HasPrefix(msg.Resource, "{") {
			return
		}
		sample := map[string]string{}
		for _, a := range pr.Arguments {
			sample[a.Name] = "x"
		}
		if err := checkURI(pr.Fill(msg.Resource, sample)); err != nil {
			fail(path+".resource", "%v", err)
		}
	}
}
