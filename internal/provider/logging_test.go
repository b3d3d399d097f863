package provider

import (
	"os"
	"testing"
)

func TestQuietUnrequestedLogs(t *testing.T) {
	names := []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"}
	unset := func() {
		for _, n := range names {
			t.Setenv(n, "")
			_ = os.Unsetenv(n)
		}
	}

	unset()
	QuietUnrequestedLogs()
	for _, n := range names[1:] {
		if got := os.Getenv(n); got != "off" {
			t.Errorf("with no TF_LOG, %s = %q, want off", n, got)
		}
	}

	unset()
	t.Setenv("TF_LOG", "debug")
	QuietUnrequestedLogs()
	if got := os.Getenv("TF_LOG_SDK"); got != "" {
		t.Errorf("with TF_LOG set, TF_LOG_SDK = %q, want it untouched", got)
	}

	unset()
	t.Setenv("TF_LOG_SDK_PROTO", "trace")
	QuietUnrequestedLogs()
	if got := os.Getenv("TF_LOG_SDK_PROTO"); got != "trace" {
		t.Errorf("a level the user set was overridden: %q", got)
	}
}
