package cluster

import (
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"go.yaml.in/yaml/v3"
)

// Auth is a broker's credentials file: users with passwords, or one token.
//
//	users:
//	  - {user: alice, password: s3cret}
//	nkeys:           # public user keys (nk -gen user); with users, or alone
//	  - UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4
//	# or
//	token: a-long-random-string
type Auth struct {
	// Users may connect with their password (clients, workers and child
	// brokers alike).
	Users []User `yaml:"users"`
	// NKeys are public user nkeys: a connection proves it holds the
	// matching seed by signing the server's challenge (clients and
	// workers; child brokers use users or the token).
	NKeys []string `yaml:"nkeys"`
	// Token, when set, is the one secret every connection presents.
	Token string `yaml:"token"`
}

// User is one user of an Auth file.
type User struct {
	// User is the name; Password its password.
	User     string `yaml:"user"`
	Password string `yaml:"password"`
}

// LoadAuth reads an Auth file.
func LoadAuth(path string) (*Auth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	var a Auth
	if err := yaml.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	return &a, nil
}

func (a *Auth) check() error {
	if a.Token == "" && len(a.Users) == 0 && len(a.NKeys) == 0 {
		return errors.New("expected users: [{user, password}], nkeys: [...] or token:, found none")
	}
	if a.Token != "" && len(a.Users)+len(a.NKeys) > 0 {
		return errors.New("expected users and nkeys, or a token, found both")
	}
	for i, k := range a.NKeys {
		if !nkeys.IsValidPublicUserKey(k) {
			return fmt.Errorf("nkey %d: %q is not a public user nkey (expected U followed by 55 characters)", i+1, k)
		}
	}
	for i, u := range a.Users {
		if u.User == "" || u.Password == "" {
			return fmt.Errorf("user %d: expected user and password, found user %q and a password of %d characters", i+1, u.User, len(u.Password))
		}
	}
	return nil
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
	// nats://user:password@host:port, nats://token@host:port).
	User, Password, Token string
	// NKeySeed, when set, is a file holding a user nkey seed.
	NKeySeed string
	// TLS configures the connection's TLS.
	TLS TLSFiles
}

func (c Credentials) natsOptions() []nats.Option {
	var o []nats.Option
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

// serverAuth applies an Auth to a server's client and leaf-node listeners.
func serverAuth(o *server.Options, a *Auth) {
	if a == nil {
		return
	}
	if a.Token != "" {
		o.Authorization = a.Token
		o.LeafNode.Username = "" // leaf remotes present the token as user
		o.LeafNode.Users = nil
		o.LeafNode.Username, o.LeafNode.Password = "token", a.Token
		return
	}
	for _, u := range a.Users {
		o.Users = append(o.Users, &server.User{Username: u.User, Password: u.Password})
		o.LeafNode.Users = append(o.LeafNode.Users, &server.User{Username: u.User, Password: u.Password})
	}
	for _, k := range a.NKeys {
		o.Nkeys = append(o.Nkeys, &server.NkeyUser{Nkey: k})
	}
}
