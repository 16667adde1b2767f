package protocol

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
)

// CodeRateLimited is the code of a request refused because its client is
// over its rate of calls; the error's data.retryAfterMs says when it may
// try again. (JSON-RPC leaves -32000 to -32099 to servers.)
const CodeRateLimited = -32000

// RateLimited returns the error that refuses a call of a client over its
// rate, which may try again after retryAfter: over stdio the answer to
// the call, over HTTP the body of a 429.
func RateLimited(retryAfter time.Duration) *Error {
	ms := RetryAfterMs(retryAfter)
	data, _ := json.Marshal(struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}{ms}, encodeOpts) // an integer: it encodes
	return &Error{Code: CodeRateLimited, Data: data,
		Message: fmt.Sprintf("too many calls: this client is over its rate of calls; try again in %s", waitWords(ms))}
}

// RetryAfterMs is retryAfter in whole milliseconds, rounded up, at
// least one: a client told 0 would try again at once.
func RetryAfterMs(retryAfter time.Duration) int64 {
	return max(int64((retryAfter+time.Millisecond-1)/time.Millisecond), 1)
}

// waitWords says ms milliseconds as a person reads a wait: whole seconds,
// rounded up.
func waitWords(ms int64) string {
	return fmt.Sprintf("%ds", (ms+999)/1000)
}

// overRate answers rq, a call, when the session's Admit refuses it: a
// tool call with an isError result a model can act on, any other call
// with CodeRateLimited. It reports false when the call may go on.
func (ss *Session) overRate(rq *request, info methodInfo) (Message, bool) {
	if ss.admit == nil {
		return Message{}, false
	}
	wait, ok := ss.admit()
	if ok {
		return Message{}, false
	}
	ss.log.Debug().Str("method", rq.method).Dur("retry_after", wait).Msg("call refused: over the client's rate")
	if rq.method != "tools/call" {
		return errorMsg(rq.id, RateLimited(wait)), true
	}
	res := &callToolResult{CallToolResult: *TextResult(fmt.Sprintf(
		"Too many calls: this client is over its rate of calls, so nothing was run. Try again in %s.", waitWords(RetryAfterMs(wait))), true)}
	return ss.encode(rq, info, res, nil), true
}

// errDenied is the error of a Call's request to its client that the
// session's options forbid (SessionOptions.DenySampling, …): the client's
// policy, not its capabilities, says no.
func errDenied(what string) error {
	return fmt.Errorf("%w: this client's policy does not let the backend %s", ErrNotSupported, what)
}
