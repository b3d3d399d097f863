package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs main when the test binary is started as the command.
func TestMain(m *testing.M) {
	if os.Getenv("TESTREPORT_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

const (
	pass   = `{"Action":"start","Package":"p"}` + "\n" + `{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}` + "\n" + `{"Action":"pass","Package":"p","Elapsed":0.1}` + "\n"
	failed = `{"Action":"start","Package":"p"}` + "\n" + `{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}` + "\n" + `{"Action":"fail","Package":"p","Elapsed":0.1}` + "\n"
)

// TestExitStatus: the command's exit status is what make test relies on.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name, in, stdout string
		args             []string
		want             int
	}{
		{"passed", pass, "ok  \tp\t0.1s\n", []string{"-timeout", "20m", "-title", "Terraform 1.16"}, 0},
		{"failed", failed, "FAIL\tp\t0.1s\n", nil, 1},
		{"cut short", `{"Action":"start","Package":"p"}` + "\n", "FAIL\tp\t(no result", nil, 1},
		{"bad flag", pass, "", []string{"-timeout", "soon"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], tc.args...)
			cmd.Env = append(os.Environ(), "TESTREPORT_RUN_MAIN=1")
			cmd.Stdin = strings.NewReader(tc.in)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.want, stdout.String(), stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tc.stdout) {
				t.Errorf("stdout:\n%s\nwant it to start with %q", stdout.String(), tc.stdout)
			}
		})
	}
}
