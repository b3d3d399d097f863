package acctest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// ErrorWatch is the ErrorCheck of a TestCase whose failing steps must not
// repeat a secret. ExpectError only matches a pattern, and Go's regexp
// cannot say "does not contain", so the failing steps leave ExpectError
// unset and the watch, knowing which step runs (expect and pass set it in
// PreConfig), takes its place: it accepts the step's error when it
// matches the step's pattern and holds no secret, and fails the test when
// an expected error never came.
type ErrorWatch struct {
	T *testing.T
	// Secrets are never in any error of the test.
	Secrets []string
	// AfterError, unless nil, checks more once a step failed as expected:
	// the state the failed step left, say.
	AfterError func() error

	// The running step's expectation: pending while its error has not
	// come, want its pattern, absent what it must not repeat beside the
	// secrets.
	Pending bool
	Want    *regexp.Regexp
	Absent  []string
}

func NewErrorWatch(t *testing.T, secrets ...string) *ErrorWatch {
	w := &ErrorWatch{T: t, Secrets: secrets}
	t.Cleanup(func() {
		if w.Pending && !t.Failed() {
			t.Errorf("the last step succeeded, but an error matching %s was expected", w.Want)
		}
	})
	return w
}

// Expect makes step one that must fail with an error matching want that
// repeats neither the watch's secrets nor absent.
func (w *ErrorWatch) Expect(step resource.TestStep, want *regexp.Regexp, absent ...string) resource.TestStep {
	return w.Wrap(step, func() { w.Pending, w.Want, w.Absent = true, want, absent })
}

// Pass makes step one that must succeed.
func (w *ErrorWatch) Pass(step resource.TestStep) resource.TestStep {
	return w.Wrap(step, func() { w.Pending, w.Want, w.Absent = false, nil, nil })
}

func (w *ErrorWatch) Wrap(step resource.TestStep, start func()) resource.TestStep {
	pre := step.PreConfig
	step.PreConfig = func() {
		w.T.Helper()
		if w.Pending {
			w.T.Fatalf("the step before succeeded, but an error matching %s was expected", w.Want)
		}
		start()
		if pre != nil {
			pre()
		}
	}
	return step
}

// Check is the TestCase's ErrorCheck: nil for the error the running step
// expects, when it repeats no secret.
func (w *ErrorWatch) Check(err error) error {
	text := err.Error()
	// The lines of the configuration Terraform quotes are the user's own
	// text: what they hold is not repeated by the provider.
	said := ConfigLine.ReplaceAllString(text, "")
	for _, secret := range append(slices.Clone(w.Secrets), w.Absent...) {
		if strings.Contains(said, secret) {
			return fmt.Errorf("the error Terraform prints repeats %q:\n%w", secret, err)
		}
	}
	if !w.Pending || !w.Want.MatchString(text) {
		return err
	}
	w.Pending = false
	if w.AfterError != nil {
		return w.AfterError()
	}
	return nil
}

// ConfigLine matches a line of the configuration as Terraform quotes it
// under an error: "  17:   apigw_url = …".
var ConfigLine = regexp.MustCompile(`(?m)^[\s│]*\d+:.*$`)
