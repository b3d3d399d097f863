package policyexpr

import (
	"fmt"
	"strings"
	"testing"
)

// TestAlternatives: every shape IAM writes reads as the alternatives a message names, in the
// expression's order: ids, a path prefix, an instance under a path, every instance, everything, an
// attribute condition, a combination of types; an AND of ORs multiplies out.
func TestAlternatives(t *testing.T) {
	cases := []struct {
		name, expr string
		want       []string
	}{
		{"one id", eqHost, []string{"host 1"}},
		{"ids", inHost, []string{"host 1, 2"}},
		{"numbers keep their text", numbers, []string{"host 7", "host 8, 9"}},
		{"an instance under a path", pathTwo, []string{"host 3, 4 and host under /biz,1/set,2/"}},
		{"every host under a path", ancestorOnly, []string{"host under /biz,1/set,2/"}},
		{"every instance of a type", anyTyped, []string{"every biz"}},
		{"everything", anyEmpty, []string{"everything"}},
		{"a combination", combinedOR, []string{"biz 1 and host 7", "biz 2 and host 8, 9"}},
		{"a combination with every host", combinedAny, []string{"biz 1 and every host"}},
		{"an AND of an OR", combinedOfOr, []string{"biz 1 and host 7, 8"}},
		{"nested ANDs", andInAnd, []string{"biz 1 and host 7 and set 3"}},
		{"the sandbox's mix", sandboxMix, []string{"host 1, 2", "host 3 and host under /biz,1/", "host under /biz,2/"}},
		{"an attribute", andAttribute, []string{"host 1 and host.os eq linux", `host 2 and host.id not_eq "9"`}},
		{"an AND of two ORs", `{"op":"AND","content":[` +
			`{"op":"OR","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"biz.id","op":"eq","value":"2"}]},` +
			`{"op":"OR","content":[{"field":"host.id","op":"eq","value":"7"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}]}]}`,
			[]string{"biz 1 and host 7", "biz 1 and host under /biz,1/", "biz 2 and host 7", "biz 2 and host under /biz,1/"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			alts, ok := mustParse(t, c.expr).Alternatives()
			if !ok {
				t.Fatal("Alternatives: too complex")
			}
			var got []string
			for _, a := range alts {
				got = append(got, a.String())
			}
			if strings.Join(got, "; ") != strings.Join(c.want, "; ") {
				t.Errorf("Alternatives(%s)\n got %q\nwant %q", c.expr, got, c.want)
			}
		})
	}
}

// TestAlternativesBounded: an AND of ORs past MaxAlternatives is refused rather than multiplied
// out; an id list of any length stays one condition.
func TestAlternativesBounded(t *testing.T) {
	or := func(typ string, n int) string {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf(`{"field":"%s.id","op":"eq","value":"%d"}`, typ, i))
		}
		return `{"op":"OR","content":[` + strings.Join(members, ",") + `]}`
	}
	within := `{"op":"AND","content":[` + or("biz", 100) + "," + or("host", 100) + `]}`
	if alts, ok := mustParse(t, within).Alternatives(); !ok || len(alts) != 10000 {
		t.Errorf("100 × 100: got %d alternatives, ok %v; want 10000, true", len(alts), ok)
	}
	past := `{"op":"AND","content":[` + or("biz", 101) + "," + or("host", 100) + `]}`
	if _, ok := mustParse(t, past).Alternatives(); ok {
		t.Error("101 × 100: want too complex")
	}
	ids := make([]string, 20000)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"%d"`, i)
	}
	long := `{"field":"host.id","op":"in","value":[` + strings.Join(ids, ",") + `]}`
	if alts, ok := mustParse(t, long).Alternatives(); !ok || len(alts) != 1 || len(alts[0][0].Values) != 20000 {
		t.Errorf("a list of 20000 ids: got %d alternatives, ok %v", len(alts), ok)
	}
	if alts, ok := (*Expr)(nil).Alternatives(); !ok || alts != nil {
		t.Errorf("nil: got %v, %v", alts, ok)
	}
}

// TestIDsOf: the ids an alternative grants of a type are the intersection of its id conditions on
// the type; other types' ids and other conditions are not among them.
func TestIDsOf(t *testing.T) {
	id := func(typ string, ids ...string) Condition {
		return Condition{Type: typ, Attribute: AttributeID, Op: opIn, Values: ids}
	}
	under := Condition{Type: "host", Attribute: AttributePath, Op: opStartsWith, Values: []string{"/biz,1/"}}
	for _, c := range []struct {
		name string
		alt  Alternative
		want []string
		ok   bool
	}{
		{"no id condition", Alternative{under}, nil, false},
		{"one", Alternative{id("host", "1", "2")}, []string{"1", "2"}, true},
		{"two intersect", Alternative{id("host", "1", "2", "3"), under, id("host", "3", "2", "9")}, []string{"2", "3"}, true},
		{"disjoint", Alternative{id("host", "1"), id("host", "2")}, []string{}, true},
		{"another type's", Alternative{id("biz", "1"), id("host", "7")}, []string{"7"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.alt.IDsOf("host")
			if ok != c.ok || fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("IDsOf(host) = %v, %t; want %v, %t", got, ok, c.want, c.ok)
			}
		})
	}
}
