package toolsearch

import (
	"slices"
	"strings"
	"sync"
)

// synonymText lists everyday words models use in requests, and the words
// tools tend to use for the same thing. A query word adds its synonyms at
// Weights.Synonym. The table is general vocabulary, by topic; it is not fitted
// to particular tools or phrases.
const synonymText = `
reply respond answer write+back get+back: reply email message
email e-mail mail inbox gmail letter newsletter: email mail
write compose: draft write create send
forward fwd pass+on: forward email
archive: label inbox remove
star flag: label starred
spam junk phishing scam: trash label
attachment attached: attachment
thread conversation chain back-and-forth: thread conversation
text texts txt texted texting sms imessage chat: message imessage sms conversation
agenda diary planner schedule: calendar event list
schedule book: calendar event create
meeting appointment standup event lunch dinner breakfast party interview call: event calendar meeting
free available busy clear slot gap: free time slot
invite invitation rsvp tentative tentatively: invitation accept decline attendee
accept decline: invitation response
cancel: delete cancel
reschedule postpone push: update change time
attendee guest participant coming: attendee
zoom meet video: video call link
phone mobile cell number: phone contact
person people friend colleague: contact
address+book card: contact
birthday: contact birthday
todo to-do todos to-dos task chore: reminder task
remind reminder forget: reminder task
shopping groceries: grocery list reminder
done finished finish complete tick tick+off check+off: complete done
document doc docs paper spreadsheet resume cv report: file document
txt pdf csv log json md docx xlsx zip dmg png jpg: file document
folder directory dir: folder list
contents print: read
modified edited changed: modification time
open: read open
save store keep: write save
append: write append
rename: move rename
delete remove erase trash discard bin throw rid scrap ditch: delete trash remove
recent recently lately latest newest: recent
size big large: size info
download downloaded downloads: download
jot memo note notes: note create
oxygen spo2 saturation o2: spo2 oxygen blood
pulse bpm heartbeat heart: heart rate
hrv variability: hrv heart rate variability
sleep slept asleep night overnight bed bedtime nap: sleep night
step steps walk walked walking far: step activity walk distance
exercise workout run runs ran jog gym training cycling bike biking ride hike yoga swim: workout activity
recovered recovery rested tired wiped exhausted energy ready: readiness recovery
weigh weight kilos kg pounds lbs scale fat bmi: weight body
calories burned burn burnt: calories activity
ring oura fitness: health
password passcode pin login credential sign-in account username: password login item vault
2fa two-factor otp totp code verification authenticator: one-time code otp totp
vault keychain 1password: vault password
secret token key: secret password
bug ticket issue defect story: issue bug
assign assigned mine: assignee my
priority urgent: priority
progress status: state
close resolve fixed: update state done
comment: comment
tracker backlog jira: issue linear
project roadmap milestone: project
screenshot screengrab capture snap grab: screenshot capture screen
picture pictures pic pics image images: photo image screenshot
window windows: window
monitor monitors display screens resolution: display
ocr visible: read text recognise screen
clipboard copy paste copied pasted: clipboard
volume sound loud quiet quieter mute unmute louder: volume sound mute
battery charge charging plugged power: battery
wifi wi-fi network internet connected online offline ip: wi-fi network
launch: open application
app apps program application: application app
notify alert notification popup pop+up banner: notification notify
memory cpu cpus ram: memory running
shortcut shortcuts automation automations workflow: shortcut
computer machine mac laptop host server: computer system mac backend
ping test connection echo reach reachable: echo connection
uptime: status
photo photos video videos selfie: photo image
album: album
tab tabs: tab
website websites site sites web page pages url link browser: web page url safari
history visited visit browsed: history
bookmark bookmarks favorites favourites: bookmark
where location here nearby near around city town gps coordinates: location current near
nearest closest close+by: near
directions route drive driving commute way transit bus train: directions route travel
restaurant shop store supermarket pharmacy cafe coffee bar pub hotel place: place search
map maps: map
now currently: current
find search look lookup look+up seek locate: search find
show list see view: list show
read check: read get
create add new make: create add new
change edit update modify fix set: update change edit
get fetch retrieve: get read
wait pause delay: wait slow
second seconds: millisecond
details detail info information: info get detail
verb text txt sms imessage message: send
verb email mail e-mail: send
verb remind: create add
verb jot note: create add
verb file log raise: create add
verb book schedule: create
verb bin ditch scrap: delete trash
verb star flag: label
verb launch start: open
verb trigger: run
verb put enter insert record register: create add
verb move shift rename adjust alter amend correct: update change
verb drop clear wipe: delete remove
verb tell ping: send message
verb pull display: show open
`

// synonym is a word a query word stands for.
type synonym struct {
	term, text string // as matched, and as written in the table
}

// synonyms is the table read.
type synonyms struct {
	// of holds what a query word, or two side by side ("write back"),
	// stands for, by term; verbs what a word stands for as the verb of
	// a request.
	of, verbs map[string][]synonym
	words     map[string]string // every word of the table as written, and its term
}

// synonymTable returns the table read with stemming, or without.
func synonymTable(noStemming bool) *synonyms {
	if noStemming {
		return plainSynonyms()
	}
	return stemmedSynonyms()
}

var (
	stemmedSynonyms = sync.OnceValue(func() *synonyms { return readSynonyms(false) })
	plainSynonyms   = sync.OnceValue(func() *synonyms { return readSynonyms(true) })
)

func readSynonyms(noStemming bool) *synonyms {
	s := &synonyms{of: map[string][]synonym{}, verbs: map[string][]synonym{}, words: map[string]string{}}
	for line := range strings.Lines(synonymText) {
		left, right, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		table := s.of
		if rest, ok := strings.CutPrefix(strings.TrimSpace(left), "verb "); ok {
			table, left = s.verbs, rest
		}
		var means []synonym
		for w := range words(right, noStemming) {
			if w.stop || w.part {
				continue
			}
			s.words[w.text] = w.term
			if !slices.ContainsFunc(means, func(m synonym) bool { return m.term == w.term }) {
				means = append(means, synonym{w.term, w.text})
			}
		}
		var keys []string
		for _, tok := range strings.Fields(left) {
			if strings.Contains(tok, "+") {
				// Two words side by side, stop words included.
				var terms []string
				for part := range strings.SplitSeq(tok, "+") {
					for w := range words(part, noStemming) {
						terms = append(terms, w.term)
					}
				}
				keys = append(keys, strings.Join(terms, " "))
				continue
			}
			for w := range words(tok, noStemming) {
				if !w.stop {
					s.words[w.text] = w.term
					keys = append(keys, w.term)
				}
			}
		}
		for _, k := range keys {
			for _, m := range means {
				if m.term != k && !slices.ContainsFunc(table[k], func(o synonym) bool { return o.term == m.term }) {
					table[k] = append(table[k], m)
				}
			}
		}
	}
	return s
}
