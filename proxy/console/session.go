package console

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
	"time"
)

const (
	cookieName = "payguard_session"
	// maxSessionAge bounds a session however active it is.
	maxSessionAge = 12 * time.Hour
	// maxSessions bounds memory: the oldest session is dropped past it.
	maxSessions = 1000
)

type session struct {
	csrf     string
	created  time.Time
	lastSeen time.Time
	expires  time.Time
}

// sessions are kept in memory, by the SHA-256 of the cookie value (a heap dump or a timing probe of the
// map does not give a usable cookie). A restart signs everyone out.
type sessions struct {
	mu   sync.Mutex
	now  func() time.Time
	idle time.Duration
	byID map[[32]byte]*session
}

func newSessions(now func() time.Time, idle time.Duration) *sessions {
	return &sessions{now: now, idle: idle, byID: map[[32]byte]*session{}}
}

func random() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("console: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

func (s *sessions) create() (string, *session) {
	id := random()
	now := s.now()
	ss := &session{csrf: random(), created: now, lastSeen: now, expires: minTime(now.Add(s.idle), now.Add(maxSessionAge))}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	if len(s.byID) >= maxSessions {
		var oldest [32]byte
		var at time.Time
		for k, v := range s.byID {
			if at.IsZero() || v.created.Before(at) {
				oldest, at = k, v.created
			}
		}
		delete(s.byID, oldest)
	}
	s.byID[sha256.Sum256([]byte(id))] = ss
	return id, ss
}

// get returns the request's live session; touch (a person's action, not the page's polling) extends its
// idle expiry, never past its absolute one. So a console left open and unattended still signs out.
func (s *sessions) get(r *http.Request, touch bool) (*session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, false
	}
	key := sha256.Sum256([]byte(c.Value))
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byID[key]
	if !ok {
		return nil, false
	}
	if !now.Before(ss.expires) {
		delete(s.byID, key)
		return nil, false
	}
	if touch {
		ss.lastSeen = now
		ss.expires = minTime(now.Add(s.idle), ss.created.Add(maxSessionAge))
	}
	cp := *ss
	return &cp, true
}

func (s *sessions) remove(r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		s.mu.Lock()
		delete(s.byID, sha256.Sum256([]byte(c.Value)))
		s.mu.Unlock()
	}
}

func (s *sessions) sweep(now time.Time) {
	for k, v := range s.byID {
		if !now.Before(v.expires) {
			delete(s.byID, k)
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
