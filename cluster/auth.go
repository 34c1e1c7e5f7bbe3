package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"go.yaml.in/yaml/v3"
)

// Auth is a broker's auth file: its users, each with a role.
//
//	users:
//	  - {user: alice, password: s3cret, role: client}
//	  - {user: w, password: pw2, role: worker}
//	  - {user: bob, nkey: UCGNFFHX7IRPKR4SDA27ZOLE72GOKLCYDXCJB6W67MANNMFSIQYK7HVX, role: client}
//	  - {user: ops, password: pw3, role: admin}
//	  - {user: leaf, password: pw4, role: broker}
//
// A client may publish and subscribe only under its own subjects
// (sluice.u.USER.> and the inbox _INBOX_USER.>), so users cannot see,
// replay or cancel each other's jobs; a worker serves every user's jobs;
// an admin may do everything; a broker user is what a child broker
// presents to its parent (subjects.go names every subject and role).
type Auth struct {
	// Users are the broker's users.
	Users []User `yaml:"users"`
}

// User is one user of an Auth file.
type User struct {
	// User is the name: its jobs' subjects are sluice.u.USER.> (an nkey
	// user without one is named by its key).
	User string `yaml:"user"`
	// Password, or NKey (a public user nkey, nk -gen user: the
	// connection proves it holds the seed by signing the server's
	// challenge), authenticates the user. A password may be a bcrypt
	// hash ($2a$...).
	Password string `yaml:"password"`
	NKey     string `yaml:"nkey"`
	// Role is client, worker, admin or broker.
	Role Role `yaml:"role"`

	line, col int // where the file gave it
}

// authFile is an auth file as written, with the fields of its earlier
// format, which are refused with what to write instead.
type authFile struct {
	Users []yaml.Node `yaml:"users"`
	NKeys []string    `yaml:"nkeys"`
	Token string      `yaml:"token"`
}

// LoadAuth reads an Auth file.
func LoadAuth(path string) (*Auth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	var f authFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	if f.Token != "" {
		return nil, fmt.Errorf("auth file %s: token: is no longer accepted: one token gives every connection the same identity, so users cannot be kept apart; list users instead, each with a password and a role (users: [{user: NAME, password: PW, role: client|worker|admin|broker}])", path)
	}
	if len(f.NKeys) > 0 {
		return nil, fmt.Errorf("auth file %s: nkeys: is no longer accepted: list each key as a user with a role (users: [{nkey: %s, role: client}])", path, f.NKeys[0])
	}
	a := &Auth{}
	for i := range f.Users {
		n := &f.Users[i]
		u := User{line: n.Line, col: n.Column}
		if err := n.Decode(&u); err != nil {
			return nil, fmt.Errorf("auth file %s:%d:%d: user %d: %w", path, n.Line, n.Column, i+1, err)
		}
		var extra map[string]any
		_ = n.Decode(&extra)
		for k := range extra {
			if k != "user" && k != "password" && k != "nkey" && k != "role" {
				return nil, fmt.Errorf("auth file %s:%d:%d: user %d: unknown field %q: expected user, password, nkey and role", path, n.Line, n.Column, i+1, k)
			}
		}
		a.Users = append(a.Users, u)
	}
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("auth file %s%w", path, err)
	}
	return a, nil
}

// check validates the users; its errors start with ":" or ":LINE:COL:"
// (LoadAuth puts the file's name in front).
func (a *Auth) check() error {
	if len(a.Users) == 0 {
		return errors.New(": expected users: [{user, password, role}], found none")
	}
	seen := map[string]int{}
	keys := map[string]int{}
	for i := range a.Users {
		u := &a.Users[i]
		at := ":"
		if u.line > 0 {
			at = fmt.Sprintf(":%d:%d:", u.line, u.col)
		}
		name := u.Name()
		switch {
		case u.Password == "" && u.NKey == "":
			return fmt.Errorf("%s user %d (%s): expected a password or an nkey, found neither", at, i+1, name)
		case u.Password != "" && u.NKey != "":
			return fmt.Errorf("%s user %d (%s): expected a password or an nkey, found both", at, i+1, name)
		case u.NKey != "" && !nkeys.IsValidPublicUserKey(u.NKey):
			return fmt.Errorf("%s user %d (%s): nkey %q is not a public user nkey (expected U followed by 55 characters)", at, i+1, name, u.NKey)
		}
		if err := checkToken("user", name); err != nil {
			return fmt.Errorf("%s user %d: %w", at, i+1, err)
		}
		if u.Role == "" {
			return fmt.Errorf("%s user %d (%s): no role: each user now has one: role: client (runs jobs, sees only its own), worker (serves jobs), admin (may do everything; what every user could before) or broker (a child broker joining this one)", at, i+1, name)
		}
		known := false
		for _, r := range roles {
			known = known || u.Role == r
		}
		if !known {
			return fmt.Errorf("%s user %d (%s): role %q: expected client, worker, admin or broker", at, i+1, name, u.Role)
		}
		if u.Role == RoleBroker && u.NKey != "" {
			return fmt.Errorf("%s user %d (%s): role broker: expected a password (a child broker presents a user and password to its parent), found an nkey", at, i+1, name)
		}
		if j, ok := seen[name]; ok {
			return fmt.Errorf("%s user %d: name %q is also user %d's: expected each name once (it names the user's subjects)", at, i+1, name, j)
		}
		seen[name] = i + 1
		if u.NKey != "" {
			if j, ok := keys[u.NKey]; ok {
				return fmt.Errorf("%s user %d (%s): its nkey is also user %d's: expected each key once", at, i+1, name, j)
			}
			keys[u.NKey] = i + 1
		}
	}
	return nil
}

// Name is the user's name: User, or the nkey when there is none.
func (u User) Name() string {
	if u.User == "" {
		return u.NKey
	}
	return u.User
}

// serverPerms converts a role's permissions to the server's; nil allows
// everything.
func (p *subjectPerms) server() *server.Permissions {
	if p == nil {
		return nil
	}
	sp := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: append([]string{}, p.pub...)},
		Subscribe: &server.SubjectPermission{Allow: append([]string{}, p.sub...)},
	}
	if p.responses {
		sp.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: 2 * time.Minute}
	}
	return sp
}

// serverAuth applies an Auth to a server's client and leaf-node listeners:
// clients, workers and admins on the client port, brokers and admins on
// the leaf-node port.
func serverAuth(o *server.Options, a *Auth) {
	for _, u := range a.Users {
		perms := u.Role.permissions(u.Name()).server()
		if u.Role != RoleBroker {
			if u.NKey != "" {
				o.Nkeys = append(o.Nkeys, &server.NkeyUser{Nkey: u.NKey, Permissions: perms})
			} else {
				o.Users = append(o.Users, &server.User{Username: u.Name(), Password: u.Password, Permissions: perms})
			}
		}
		if (u.Role == RoleBroker || u.Role == RoleAdmin) && u.NKey == "" {
			o.LeafNode.Users = append(o.LeafNode.Users, &server.User{Username: u.Name(), Password: u.Password})
		}
	}
}

// TLSFiles name the PEM files of a TLS setup. A broker needs Cert and Key
// (and CA to verify clients' certificates); a client needs CA to verify the
// broker (and Cert and Key when the broker verifies clients).
type TLSFiles struct {
	// Cert and Key are the certificate and its key; CA the authority that
	// verifies the other side.
	Cert, Key, CA string
}

// Enabled reports whether any file is set.
func (t TLSFiles) Enabled() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

// Credentials are what a client, worker or child broker presents.
type Credentials struct {
	// User and Password, or Token (they may also be in the URL:
	// nats://user:password@host:port, nats://token@host:port). User also
	// names the connection's subjects (sluice.u.USER.>).
	User, Password, Token string
	// NKeySeed, when set, is a file holding a user nkey seed; without
	// User, the seed's public key is the user's name.
	NKeySeed string
	// TLS configures the connection's TLS.
	TLS TLSFiles
}

// Empty reports whether c presents no credential at all.
func (c Credentials) Empty() bool { return c.User == "" && c.Token == "" && c.NKeySeed == "" }

// userName returns the name the connection to url goes by, which names
// its subjects: User, the URL's user, the nkey seed's public key, or
// "anonymous" (a broker without --auth).
func (c Credentials) userName(rawURL string) (string, error) {
	name := c.User
	if name == "" {
		for _, s := range strings.Split(rawURL, ",") {
			if u, err := url.Parse(strings.TrimSpace(s)); err == nil && u.User != nil {
				if _, hasPw := u.User.Password(); hasPw {
					name = u.User.Username()
					break
				}
			}
		}
	}
	if name == "" && c.NKeySeed != "" {
		seed, err := os.ReadFile(c.NKeySeed)
		if err != nil {
			return "", fmt.Errorf("nkey seed: %w", err)
		}
		kp, err := nkeys.ParseDecoratedNKey(seed)
		if err != nil {
			return "", fmt.Errorf("nkey seed %s: %w", c.NKeySeed, err)
		}
		defer kp.Wipe()
		if name, err = kp.PublicKey(); err != nil {
			return "", fmt.Errorf("nkey seed %s: %w", c.NKeySeed, err)
		}
	}
	if name == "" {
		return anonymous, nil
	}
	if err := checkToken("user", name); err != nil {
		return "", err
	}
	return name, nil
}

// natsOptions are the connection options presenting c to the broker at
// url; replies come to the user's own inbox (_INBOX_USER).
func (c Credentials) natsOptions(url string) []nats.Option {
	user, err := c.userName(url)
	if err != nil {
		return []nats.Option{func(*nats.Options) error { return err }}
	}
	o := []nats.Option{nats.CustomInboxPrefix(userInbox(user))}
	if c.User != "" {
		o = append(o, nats.UserInfo(c.User, c.Password))
	}
	if c.Token != "" {
		o = append(o, nats.Token(c.Token))
	}
	if c.NKeySeed != "" {
		if opt, err := nats.NkeyOptionFromSeed(c.NKeySeed); err == nil {
			o = append(o, opt)
		} else {
			o = append(o, func(*nats.Options) error { return fmt.Errorf("nkey seed %s: %w", c.NKeySeed, err) })
		}
	}
	if c.TLS.CA != "" {
		o = append(o, nats.RootCAs(c.TLS.CA))
	}
	if c.TLS.Cert != "" {
		o = append(o, nats.ClientCert(c.TLS.Cert, c.TLS.Key))
	}
	return o
}

// IsLoopback reports whether a listen address's host reaches this host
// only: localhost or a loopback IP. An empty host, 0.0.0.0, :: and every
// other name or address count as reachable from elsewhere.
func IsLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// CheckExposure is the safe default for a listener: what (e.g. "broker")
// listening on addrs without authentication is refused when an address is
// not loopback, unless insecure is set; then it returns a warning to
// print.
func CheckExposure(what string, addrs []string, authenticated, insecure bool) (warning string, err error) {
	if authenticated {
		return "", nil
	}
	for _, a := range addrs {
		if a == "" || IsLoopback(a) {
			continue
		}
		if !insecure {
			return "", fmt.Errorf("%s: refusing to listen on %s without authentication: anyone who reaches it could run jobs on the workers; give --auth FILE (brokers) or credentials (workers), listen on 127.0.0.1, or pass --insecure to accept the risk", what, a)
		}
		return fmt.Sprintf("%s: warning: listening on %s without authentication (--insecure): anyone who reaches it can run jobs on the workers", what, a), nil
	}
	return "", nil
}
