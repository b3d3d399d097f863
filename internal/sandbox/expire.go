package sandbox

import (
	"errors"
	"fmt"
)

// ExpirePolicy sets the expiry of the row of backendID in system to expiredAt, as time passing
// would: a test's way to a row that expired days ago, which the list no longer shows (it reaches
// back a day) and a grant still revives, since the grant routes refuse an expiry in the past. The
// row keeps everything else; IAM's housekeeping deletes a user's row a year after its expiry.
func (s *Server) ExpirePolicy(system string, backendID, expiredAt int64) error {
	if expiredAt <= 0 || expiredAt > permanentExpiredAt {
		return fmt.Errorf("expire policy: expired_at %d is outside 1..%d", expiredAt, permanentExpiredAt)
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	for k, p := range st.policies {
		if k.System != system || p.BackendID != backendID {
			continue
		}
		changed := *p
		changed.ExpiredAt = expiredAt
		t := st.begin()
		t.put(k, &changed)
		if e := t.commit(); e != nil {
			return fmt.Errorf("expire policy: %w", errors.New(e.message))
		}
		return nil
	}
	return fmt.Errorf("expire policy: system %s has no row %d", system, backendID)
}
