package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// started is a run() in progress with its announced base URL.
type started struct {
	url  string
	done chan int
	errs *strings.Builder
}

func start(t *testing.T, args ...string) *started {
	t.Helper()
	pr, pw := io.Pipe()
	st := &started{done: make(chan int, 1), errs: &strings.Builder{}}
	go func() {
		code := run(args, pw, st.errs)
		pw.Close()
		st.done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line (stderr %q): %v", st.errs.String(), err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`^bkiam-sandbox listening on (http://127\.0\.0\.1:[1-9][0-9]*)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("listening line %q", line)
	}
	st.url = m[1]
	return st
}

// terminate sends a real SIGTERM to this process (run() has it registered) and waits for exit.
func (st *started) terminate(t *testing.T) int {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-st.done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("no exit after SIGTERM")
		return -1
	}
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("X-Bkapi-Authorization", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret"}`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

const grant = `{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"edit_host"}],` +
	`"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"1","name":"h1"},{"id":"2","name":"h2"}]}]}`

func TestServeSignalAndRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	st := start(t, "--listen", "127.0.0.1:0", "--state", state)
	if code, body := post(t, st.url+"/api/v1/open/authorization/batch_instance/", grant); code != 200 || !strings.Contains(body, `"code":0`) {
		t.Fatalf("grant: %d %s", code, body)
	}
	// An in-flight request (slowed by an injected latency) finishes before the exit.
	if code, body := post(t, st.url+"/_sandbox/faults", `{"latency_ms":300}`); code != 200 {
		t.Fatalf("faults: %d %s", code, body)
	}
	inflight := make(chan string, 1)
	go func() {
		_, body := post(t, st.url+"/api/v1/open/authorization/batch_instance/", strings.Replace(grant, "alice", "bob", 1))
		inflight <- body
	}()
	time.Sleep(100 * time.Millisecond)
	if code := st.terminate(t); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, st.errs.String())
	}
	if body := <-inflight; !strings.Contains(body, `"code":0`) {
		t.Fatalf("in-flight request: %s", body)
	}
	// What the state file holds, read back through a restarted sandbox.
	st2 := start(t, "--listen", "127.0.0.1:0", "--state", state)
	before := get(t, st2.url+"/_sandbox/policies")
	var list struct {
		Policies []struct {
			PolicyID int64               `json:"policy_id"`
			Subject  struct{ ID string } `json:"subject"`
			Paths    []string            `json:"paths"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(before), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Policies) != 2 || list.Policies[0].Subject.ID != "alice" || list.Policies[1].Subject.ID != "bob" ||
		strings.Join(list.Policies[0].Paths, " ") != "/bk_cmdb,host,1/ /bk_cmdb,host,2/" {
		t.Fatalf("policies after restart: %s", before)
	}
	if code := st2.terminate(t); code != 0 {
		t.Fatalf("second exit code %d", code)
	}
}

func TestStartupErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	_ = os.WriteFile(corrupt, []byte(`{"version":1,`), 0o600)
	badModel := filepath.Join(dir, "model.json")
	_ = os.WriteFile(badModel, []byte(`{"systems":[{"id":"s","resource_types":[],"actions":[{"id":"a","related_types":["hots"]}],"allow_list":{"instance_actions":[],"creator_types":[]}}]}`), 0o600)
	cases := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--state", corrupt, "--listen", "127.0.0.1:0"}, 1, "is corrupt"},
		{[]string{"--model", badModel, "--listen", "127.0.0.1:0"}, 1, `systems[0].actions[0].related_types[0]: unknown resource type "hots"`},
		{[]string{"--model", filepath.Join(dir, "missing.json")}, 1, "read model"},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
		{[]string{"--listen", "256.0.0.1:0"}, 1, "listen"},
	}
	for _, tc := range cases {
		var out, errs strings.Builder
		if code := run(tc.args, &out, &errs); code != tc.code || !strings.Contains(errs.String(), tc.err) || out.Len() != 0 {
			t.Errorf("%v: code %d stderr %q stdout %q", tc.args, code, errs.String(), out.String())
		}
	}
	if b, _ := os.ReadFile(corrupt); string(b) != `{"version":1,` {
		t.Error("corrupt state file was overwritten")
	}
}
