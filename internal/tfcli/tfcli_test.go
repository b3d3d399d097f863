package tfcli

import (
	"context"
	"os"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		out      string
		want     string
		name     string
		tf1_7    bool // has `terraform test`
		tf1_14   bool // has `terraform query`
		tofu1_12 bool
	}{
		{"Terraform v1.5.7\non linux_amd64\n", "Terraform v1.5.7", "terraform", false, false, false},
		{"Terraform v1.16.4\non linux_amd64\n", "Terraform v1.16.4", "terraform", true, true, false},
		// A warning before the version line, as a missing CLI configuration file prints.
		{"There are some problems with the CLI configuration:\n│ Warning\n\nTerraform v1.16.4\non linux_amd64\n", "Terraform v1.16.4", "terraform", true, true, false},
		{"OpenTofu v1.12.6\non linux_amd64\n", "OpenTofu v1.12.6", "tofu", false, false, true},
		{"Terraform v2.0.0\n", "Terraform v2.0.0", "terraform", true, true, false},
	} {
		c, err := parse("x", []byte(tc.out))
		if err != nil {
			t.Fatalf("%q: %v", tc.out, err)
		}
		if c.String() != tc.want || c.Name != tc.name || c.Terraform(1, 7) != tc.tf1_7 || c.Terraform(1, 14) != tc.tf1_14 || c.Tofu(1, 12) != tc.tofu1_12 {
			t.Errorf("%q: %+v (%s), want %s %s test=%v query=%v tofu1.12=%v", tc.out, c, c, tc.want, tc.name, tc.tf1_7, tc.tf1_14, tc.tofu1_12)
		}
	}
	if _, err := parse("x", []byte("usage: x\n")); err == nil {
		t.Error("an answer without a version parsed")
	}
}

// TestIdentify reads the CLI make test hands the tests, when there is one.
func TestIdentify(t *testing.T) {
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if path == "" {
		t.Skip("no CLI: TF_ACC_TERRAFORM_PATH is unset")
	}
	c, err := Identify(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Major != 1 || c.Path != path {
		t.Fatalf("Identify(%s) = %+v", path, c)
	}
	t.Log(c)
}
