// Package toolsearch ranks tools for a request written in everyday words,
// as models write them ("reply to the last message from Ana"): BM25F over
// the words of each tool's fields, weighted by field, with Snowball
// stemming, a small table of everyday synonyms, correction of misspelt
// words, and a few cues of how requests are written (a verb first, a
// question, a topic after "about"). It is deterministic, local and knows
// nothing of MCP or manifests.
package toolsearch

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Doc is one tool to search. Name is split into words at _ . - and
// camelCase humps.
type Doc struct {
	Name        string
	Title       string
	Description string
	// Params are the parameters' names and descriptions.
	Params string
	// Group describes the tool's group: its manifest's name, description
	// and category.
	Group string
	// ReadOnly says the tool only reads (its readOnlyHint): a question
	// ("what's on my calendar?") prefers such tools.
	ReadOnly bool
}

// Field is one of a Doc's fields.
type Field uint8

// The fields of a Doc, in the order an explanation prefers them.
const (
	FieldName Field = iota
	FieldTitle
	FieldDescription
	FieldParams
	FieldGroup
	numFields
)

func (f Field) String() string {
	return [...]string{"name", "title", "description", "parameters", "group"}[f]
}

// Weights are the ranking's weights. The defaults were measured on the
// tuning set; the evaluation also fits them anew on parts of it, to tell
// how much a fit learns those requests rather than requests in general.
type Weights struct {
	// Field weights: a word in the name says more about a tool than one
	// in a parameter's description. The group's words are shared by
	// every tool of the group, so they pick the group, and the other
	// fields the tool.
	Name, Title, Description, Params, Group float64
	// Synonym is the weight of a word the synonym table gives, relative
	// to the word itself.
	Synonym float64
	// Correction is the weight of a known word a misspelt one is taken
	// for.
	Correction float64
	// Verb is the weight of what a word means as the verb of a request:
	// "text Ana" asks to send.
	Verb float64
	// Topic is the weight of a word that says what an item is about
	// rather than which tool acts on it: "a note about the meeting",
	// "text Ana saying ...", words in quotes.
	Topic float64
	// Question is the share of its score that a tool that only reads
	// gains when the request asks something.
	Question float64
	// Later is what a word of a description's sentences after the
	// first counts, relative to one of the first, which says what the
	// tool does.
	Later float64
	// Surface is the weight that a word found as written, and not only
	// as its stem, adds: "events" is more like "events" than "event".
	Surface float64
	// K1 and B are BM25's: B the usual one; K1 higher than the usual
	// 1.2, so that a word in a tool's name or title counts for more
	// than one in its description before it saturates.
	K1, B float64
}

// DefaultWeights returns the weights used when Options.Weights is nil.
func DefaultWeights() Weights {
	return Weights{
		Name: 3, Title: 2, Description: 1, Params: 0.5, Group: 0.75,
		Synonym: 0.5, Correction: 0.8, Verb: 0.5, Topic: 0.3, Question: 0.5,
		Later: 0.5, Surface: 1, K1: 3, B: 0.75,
	}
}

// Options turn ranking signals off, so that the evaluation can measure
// what each adds. The zero value has every signal on.
type Options struct {
	NoStemming     bool // match words as written, in lower case
	NoSynonyms     bool // no synonym table
	NoCorrection   bool // misspelt words find nothing
	NoTopics       bool // words of a topic count in full
	NoFieldWeights bool // every field weighs 1
	NoEntities     bool // addresses, links and file names are words like others
	NoVerbs        bool // a request's verb means only what it means elsewhere
	NoQuestions    bool // a question does not prefer tools that only read
	NoSurface      bool // a word as written counts no more than its stem
	NoClauses      bool // "that I'm late" is no topic, and "where" in mid-sentence asks for a place
	// NoFirstSentence: a description's first sentence counts no more
	// than the others.
	NoFirstSentence bool
	// Weights, when not nil, replace DefaultWeights.
	Weights *Weights
}

// Index is an immutable search index over docs. It is safe for
// concurrent use.
type Index struct {
	opts     Options
	w        Weights
	weight   [numFields]float64   // of each field
	postings map[string][]posting // by term, each in doc order
	lens     [][numFields]float32 // words of each field of each doc
	avg      [numFields]float64
	// byLen holds the known words as written, by length in bytes, for
	// correcting misspelt ones; surface maps each to its term.
	byLen    map[int][]known
	surface  map[string]string
	names    []string // each doc's name and title, in lower case, for Closest
	readOnly []bool
}

type posting struct {
	doc int32
	tf  [numFields]float32
}

// New indexes docs; Search returns positions in docs.
func New(docs []Doc, opts Options) *Index {
	ix := &Index{
		opts: opts, w: DefaultWeights(), postings: map[string][]posting{}, lens: make([][numFields]float32, len(docs)),
		byLen: map[int][]known{}, surface: map[string]string{}, names: make([]string, len(docs)),
		readOnly: make([]bool, len(docs)),
	}
	if opts.Weights != nil {
		ix.w = *opts.Weights
	}
	ix.weight = [numFields]float64{ix.w.Name, ix.w.Title, ix.w.Description, ix.w.Params, ix.w.Group}
	if opts.NoFieldWeights {
		ix.weight = [numFields]float64{1, 1, 1, 1, 1}
	}
	var total [numFields]float64
	tf := map[string]*[numFields]float32{}
	for i, d := range docs {
		clear(tf)
		first, later := d.Description, ""
		if !opts.NoFirstSentence {
			first, later = firstSentence(d.Description)
		}
		for _, part := range [...]struct {
			f    Field
			text string
			n    float32 // what each word counts
		}{
			{FieldName, d.Name, 1}, {FieldTitle, d.Title, 1}, {FieldDescription, first, 1},
			{FieldDescription, later, float32(ix.w.Later)}, {FieldParams, d.Params, 1}, {FieldGroup, d.Group, 1},
		} {
			for w := range words(part.text, ix.opts.NoStemming) {
				if w.stop {
					continue
				}
				ix.known(w.text, w.term)
				ix.count(tf, w.term, part.f, part.n)
				if !opts.NoSurface && w.text != w.term {
					ix.count(tf, asWritten(w.text), part.f, part.n)
				}
				ix.lens[i][part.f] += part.n
			}
		}
		for f, n := range ix.lens[i] {
			total[f] += float64(n)
		}
		// Map order does not matter: each term's postings are in doc order.
		for t, n := range tf {
			ix.postings[t] = append(ix.postings[t], posting{int32(i), *n})
		}
		ix.names[i] = lower(d.Name + " " + d.Title)
		ix.readOnly[i] = d.ReadOnly
	}
	for f := range total {
		if len(docs) > 0 {
			ix.avg[f] = total[f] / float64(len(docs))
		}
	}
	if !opts.NoSynonyms {
		// A misspelt word may be one of the table's.
		for text, term := range synonymTable(opts.NoStemming).words {
			ix.known(text, term)
		}
	}
	for _, words := range ix.byLen {
		slices.SortFunc(words, func(x, y known) int { return cmp.Compare(x.text, y.text) })
	}
	return ix
}

// asWritten returns the term of a word as written, which no stem is.
func asWritten(text string) string { return "=" + text }

func (ix *Index) count(tf map[string]*[numFields]float32, term string, f Field, by float32) {
	n := tf[term]
	if n == nil {
		n = new([numFields]float32)
		tf[term] = n
	}
	n[f] += by
}

// firstSentence splits a description after its first sentence, which
// says what the tool does; the others tend to say how, or what it does
// not ("Fails when ...", "Check with the user ...").
func firstSentence(text string) (first, later string) {
	if i := strings.Index(text, ". "); i >= 0 {
		return text[:i+1], text[i+1:]
	}
	return text, ""
}

// known adds a word as written to the words a misspelt one may be.
func (ix *Index) known(text, term string) {
	if _, ok := ix.surface[text]; !ok {
		ix.surface[text] = term
		ix.byLen[len(text)] = append(ix.byLen[len(text)], known{text, letters(text)})
	}
}

// tf is the weighted, length-normalised frequency of p's term in its doc
// (BM25F).
func (ix *Index) tf(p *posting) float64 {
	var t float64
	for f, n := range p.tf {
		if n == 0 {
			continue
		}
		norm := 1.0
		if ix.avg[f] > 0 {
			norm = 1 - ix.w.B + ix.w.B*float64(ix.lens[p.doc][f])/ix.avg[f]
		}
		t += ix.weight[f] * float64(n) / norm
	}
	return t
}

// idf is the inverse document frequency of a term in df docs.
func (ix *Index) idf(df int) float64 {
	n := float64(len(ix.lens))
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// Hit is a doc that matches a query.
type Hit struct {
	// Doc is the doc's position in the docs the Index was made of.
	Doc   int
	Score float64
	// Matched are the query's words the doc matched, in the query's
	// order; Missed the others.
	Matched []Match
	Missed  []string
}

// Match is a query's word a doc matched.
type Match struct {
	// Word is the query's word, in lower case; Phrase says it is two
	// words side by side.
	Word   string
	Phrase bool
	// As is the doc's word that it matched when not Word itself: a
	// synonym, or the word a misspelt one was taken for.
	As string
	// Field is the field where it counted most.
	Field Field
}

// nearTie is how close to the top score, relative to it, a hit must be
// for a prior to move it.
const nearTie = 0.05

// Search returns the docs that match query, best first, at most limit
// of them. prior, when not nil, gives each doc a value between 0 and 1
// (others are clamped) that breaks ties and near-ties: the hits scoring
// within 5% of the top one are ranked by their score times 1 + 0.05 ×
// prior. Equal scores keep the docs' order.
func (ix *Index) Search(query string, limit int, prior func(doc int) float64) []Hit {
	q := ix.parse(query)
	n := len(ix.lens)
	score := make([]float64, n)
	acc := make([]float64, n)
	var touched, docs []int32
	for _, c := range q.concepts {
		df := 0
		for _, m := range c.members {
			ps := ix.postings[m.term]
			df = max(df, len(ps))
			for i := range ps {
				p := &ps[i]
				if acc[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				acc[p.doc] += m.weight * ix.tf(p)
			}
		}
		idf := ix.idf(df)
		for _, d := range touched {
			if score[d] == 0 {
				docs = append(docs, d)
			}
			score[d] += c.weight * idf * acc[d] * (ix.w.K1 + 1) / (acc[d] + ix.w.K1)
			acc[d] = 0
		}
		touched = touched[:0]
	}
	hits := make([]Hit, len(docs))
	for i, d := range docs {
		hits[i] = Hit{Doc: int(d), Score: score[d]}
		if q.question && ix.readOnly[d] {
			hits[i].Score *= 1 + ix.w.Question
		}
	}
	byScore := func(x, y Hit) int { return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(x.Doc, y.Doc)) }
	slices.SortFunc(hits, byScore)
	if prior != nil && len(hits) > 1 {
		near := 1
		for near < len(hits) && hits[near].Score >= (1-nearTie)*hits[0].Score {
			near++
		}
		eff := make(map[int]float64, near)
		for _, h := range hits[:near] {
			eff[h.Doc] = h.Score * (1 + nearTie*min(max(prior(h.Doc), 0), 1))
		}
		slices.SortStableFunc(hits[:near], func(x, y Hit) int {
			return cmp.Or(cmp.Compare(eff[y.Doc], eff[x.Doc]), cmp.Compare(x.Doc, y.Doc))
		})
	}
	hits = hits[:min(limit, len(hits))]
	for i := range hits {
		ix.explain(&hits[i], q)
	}
	return hits
}

// explain fills in what h's doc matched of q.
func (ix *Index) explain(h *Hit, q query) {
	for _, c := range q.concepts {
		best, bestW := Match{}, 0.0
		for _, m := range c.members {
			p := ix.find(m.term, h.Doc)
			if p == nil {
				continue
			}
			for f, n := range p.tf {
				if w := m.weight * ix.weight[f]; n > 0 && w > bestW {
					best, bestW = Match{Word: c.word, Phrase: c.phrase, As: m.as, Field: Field(f)}, w
				}
			}
		}
		switch {
		case bestW > 0:
			h.Matched = append(h.Matched, best)
		case !c.phrase:
			h.Missed = append(h.Missed, c.word)
		}
	}
}

// find returns the posting of term in doc, or nil.
func (ix *Index) find(term string, doc int) *posting {
	ps := ix.postings[term]
	i, ok := slices.BinarySearchFunc(ps, int32(doc), func(p posting, d int32) int { return cmp.Compare(p.doc, d) })
	if !ok {
		return nil
	}
	return &ps[i]
}
