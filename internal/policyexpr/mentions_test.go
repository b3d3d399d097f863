package policyexpr

import "testing"

func TestMentions(t *testing.T) {
	tests := []struct {
		expr string
		typ  string
		want bool
	}{
		{`{"field":"mini_app.id","op":"eq","value":"m1"}`, "mini_app", true},
		{`{"op":"AND","content":[{"field":"mini_app.id","op":"eq","value":"m1"},{"field":"mini_app._bk_iam_path_","op":"starts_with","value":"/project,p1/"}]}`, "mini_app", true},
		{`{"field":"project.id","op":"in","value":["p1","p2"]}`, "mini_app", false},
		{`{"op":"OR","content":[{"field":"project.id","op":"eq","value":"p1"},{"op":"OR","content":[{"field":"mini_app._bk_iam_path_","op":"starts_with","value":"/project,p1/"}]}]}`, "mini_app", true},
		{`{"field":"","op":"any","value":[]}`, "mini_app", true},
		{`{"field":"mini_apps.id","op":"eq","value":"m1"}`, "mini_app", false},
	}
	for _, tt := range tests {
		e, err := Parse([]byte(tt.expr))
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := e.Mentions(tt.typ); got != tt.want {
			t.Errorf("Mentions(%q) of %s = %v, want %v", tt.typ, tt.expr, got, tt.want)
		}
	}
}
