package toolsearch

import (
	"slices"
	"strings"
)

// synonymTable lists everyday words models use in requests, and the words
// tools tend to use for the same thing. A query word adds its synonyms at
// weightSynonym. The table is general vocabulary, by topic; it is not fitted
// to particular tools or phrases.
const synonymTable = `
reply respond answer: reply email message
email e-mail mail inbox gmail letter: email mail message
write compose: draft write create send
forward: forward email
archive: label inbox remove
star flag: label starred
spam junk: trash label
attachment attached: attachment
thread conversation: thread conversation
text texts sms imessage chat: message imessage sms conversation
agenda diary planner: calendar event list
schedule book: calendar event create
meeting appointment standup event lunch call: event calendar meeting
free available busy: free time slot
invite invitation rsvp: invitation accept decline attendee
accept decline: invitation response
cancel: delete cancel
reschedule postpone: update change time
attendee guest participant coming: attendee
phone mobile cell: phone contact
person people friend colleague: contact
birthday: contact birthday
todo to-do task chore: reminder task
remind reminder: reminder task
done finished finish complete: complete done
document doc docs paper: file document
txt pdf csv log json md docx xlsx: file document
folder directory dir: folder list
open: read open
save store keep: write save
rename: move rename
delete remove erase trash discard bin throw: delete trash remove
recent recently lately: recent
size big large: size info
jot memo note notes: note create
oxygen spo2 saturation o2: spo2 oxygen blood
pulse bpm heartbeat heart: heart rate
hrv variability: hrv heart rate variability
sleep slept asleep night overnight bedtime nap: sleep night
step steps walk walked walking: step activity walk
exercise workout run runs ran jog gym training cycling ride swim: workout activity
recovered recovery rested tired energy ready: readiness recovery
weigh weight kilos kg pounds lbs scale: weight body
calories burned: calories activity
fitness: health
password passcode pin login credential sign-in: password login item vault
2fa two-factor otp totp code verification authenticator: one-time code otp totp
vault keychain 1password: vault password
secret token key: secret password
bug ticket issue defect story: issue bug
assigned mine: assignee my
close resolve: update state done
comment: comment
tracker backlog jira: issue linear
project roadmap milestone: project
screenshot screengrab capture snap grab: screenshot capture screen
picture pictures pic pics image images: photo image screenshot
window windows: window
monitor display screens: display
ocr visible: read text recognise screen
clipboard copy paste copied pasted: clipboard
volume sound loud quiet mute louder: volume sound mute
battery charge charging power: battery
wifi wi-fi network internet connected: wi-fi network
launch: open application
app apps program application: application app
notify alert notification popup banner: notification notify
memory cpu ram: memory running
shortcut automation workflow: shortcut
computer machine mac laptop host: computer system mac
ping test connection echo: echo connection
photo photos video selfie: photo image
album: album
tab tabs: tab
website site web page url link browser: web page url safari
history visited: history
bookmark favorites favourites: bookmark
where location here nearby near around: location current near
directions route drive driving commute: directions route travel
restaurant shop pharmacy cafe place: place search
map maps: map
find search look lookup seek: search find
show list see view: list show
read check: read get
create add new make: create add new
change edit update modify fix set: update change edit
get fetch retrieve: get read
wait pause delay: wait sleep slow
details detail info information: info get detail
`

// synonyms maps a stemmed word to the stemmed words it stands for.
var synonyms = func() map[string][]string {
	m := map[string][]string{}
	for line := range strings.Lines(synonymTable) {
		words, means, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		for _, w := range terms(words) {
			for _, s := range terms(means) {
				if s != w && !slices.Contains(m[w], s) {
					m[w] = append(m[w], s)
				}
			}
		}
	}
	return m
}()
