package protocol

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// liveTask is what TestLiveTasksAreEveryOwnersUntilTheyExpire compares of
// a TaskInfo; its times are checked apart.
type liveTask struct {
	Tool, Owner, Client, Status, Message string
	IsError                              bool
}

// The owner's console sees every owner's tasks, the oldest first, in
// each status (input_required read from the call that waits), the ended
// ones until they expire; reading them makes no task store.
func TestLiveTasksAreEveryOwnersUntilTheyExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := taskServer()
		srv.MaxTaskTTL, srv.MaxTaskBytes = time.Minute, 1<<10
		if got := srv.LiveTasks(); got != nil || srv.taskStore != nil {
			t.Fatalf("before any task: %v, and a store made: %v", got, srv.taskStore != nil)
		}
		alice := newTaskClient(t, srv, Principal{Kind: PrincipalToken, ID: "alice"}, Version20251125)
		ids := map[string]string{}
		for i, tool := range []string{"t_progress", "t_fail", "t_big", "t_job"} {
			created, err := answer(t, alice.call(legacyCall(i+1, tool, `{"s":60}`)))
			if err != nil || created.TaskID == "" {
				t.Fatalf("%s: no task: %+v %v", tool, created, err)
			}
			ids[tool] = created.TaskID
		}
		bob := newTaskClient(t, srv, Principal{Kind: PrincipalClient, ID: "bob"}, ModernVersion)
		created, err := answer(t, bob.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_ask","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"bob's app","version":"1"}}}}`))
		if err != nil || created.TaskID == "" {
			t.Fatalf("t_ask: no task: %+v %v", created, err)
		}
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		if _, err := answer(t, alice.call(legacyReq(9, "tasks/cancel", ids["t_job"]))); err != nil {
			t.Fatalf("tasks/cancel: %v", err)
		}

		got := srv.LiveTasks()
		var view []liveTask
		for i, ti := range got {
			view = append(view, liveTask{Tool: ti.Tool, Owner: ti.Owner.String(), Client: ti.Client.Name, Status: ti.Status, Message: ti.Message, IsError: ti.IsError})
			if ti.Expires.Sub(ti.Created) != time.Minute || ti.Updated.Before(ti.Created) || i > 0 && ti.Created.Before(got[i-1].Created) {
				t.Errorf("%s: created %v, updated %v, expires %v", ti.Tool, ti.Created, ti.Updated, ti.Expires)
			}
			if want := ids[ti.Tool]; want != "" && ti.ID != want {
				t.Errorf("%s: id %s, want %s", ti.Tool, ti.ID, want)
			}
		}
		want := []liveTask{
			{Tool: "t_progress", Owner: "token:alice", Client: "test", Status: "working", Message: "1 of 3 notes"},
			{Tool: "t_fail", Owner: "token:alice", Client: "test", Status: "completed", IsError: true, Message: "The backend returned error -32011: Permission denied"},
			{Tool: "t_big", Owner: "token:alice", Client: "test", Status: "failed", Message: "the task's result, of 65575 bytes, does not fit in the room kept for the results of tasks (918 bytes free of 1024); call the tool again, or fetch the results of other tasks first"},
			{Tool: "t_job", Owner: "token:alice", Client: "test", Status: "cancelled", Message: "The task was cancelled by request."},
			{Tool: "t_ask", Owner: "client:bob", Client: "bob's app", Status: "input_required"},
		}
		if diff := cmp.Diff(want, view); diff != "" {
			t.Errorf("LiveTasks after 2.5 s (-want +got):\n%s", diff)
		}

		time.Sleep(time.Minute)
		synctest.Wait()
		if got := srv.LiveTasks(); len(got) != 0 {
			t.Errorf("after their time to live: %+v", got)
		}
	})
}
