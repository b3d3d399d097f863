package sandbox

import (
	"errors"
	"strings"
)

// Freeze freezes the subject (frozen true) or thaws it: IAM's subject blacklist, which the
// SaaS admin API's POST /api/v1/open/admin/freeze/users/ fills (an app allowed its
// subject_freeze_unfreeze; common before a leaver's cleanup). The backend then answers
// every access check and policy query about the subject 403 with code 1901403 "no
// permission:subject(type=…,id=…) has been frozen" (bk-iam pkg/api/policy/handler/util.go shouldReturnIfSubjectInBlackList),
// after the system's and client's checks and before the managers' and any policy read; its
// policies stay, and the other routes (the policy list, reads by id, the grants) go on. A
// frozen subject is matched as IAM's subject table matches ids: without regard to case.
func (s *Server) Freeze(typ, id string, frozen bool) error {
	if typ == "" || id == "" {
		return errors.New("freeze: type and id are required")
	}
	if frozen {
		s.frozen.Store(frozenKey(typ, id), struct{}{})
	} else {
		s.frozen.Delete(frozenKey(typ, id))
	}
	return nil
}

func (s *Server) isFrozen(typ, id string) bool {
	_, ok := s.frozen.Load(frozenKey(typ, id))
	return ok
}

func frozenKey(typ, id string) string { return typ + ":" + strings.ToLower(id) }
