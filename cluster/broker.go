package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// BrokerOptions configure a broker.
type BrokerOptions struct {
	// Name names the broker in the tree (and in device paths); empty
	// means "broker-PORT".
	Name string
	// Listen is the client address, host:port ("127.0.0.1:4222"; port 0
	// picks a free one).
	Listen string
	// LeafListen, when set, accepts child brokers (leaf nodes) there.
	LeafListen string
	// Parent, when set, is the parent broker's leaf-node URL
	// (nats-leaf://host:port or nats://user:password@host:port): the broker
	// joins the parent's tree as a leaf node.
	Parent string
	// ParentCreds are presented to the parent (a URL's user info wins).
	ParentCreds Credentials
	// Auth, when set, requires these credentials from clients, workers and
	// child brokers, and gives each user its role's permissions.
	Auth *Auth
	// Insecure lets a broker without Auth listen on an address other than
	// loopback, or join a parent that requires credentials (its own
	// clients would reach the parent's tree unauthenticated); the broker
	// then warns instead of refusing.
	Insecure bool
	// TLS, when set, serves clients and leaf nodes over TLS.
	TLS TLSFiles
	// StoreDir, when set, enables JetStream with its files in this
	// directory: checkpoints kept there (JetStreamStore) outlive workers
	// and a restart of the broker (docs/recovery.md). The broker then
	// creates each user's checkpoint bucket when the user asks for it
	// (clients may not create streams: subjects.go).
	StoreDir string
	// Logf, when set, receives the server's notices and errors.
	Logf func(format string, args ...any)
}

// Broker is a running broker: an embedded NATS server.
type Broker struct {
	opts     BrokerOptions
	s        *server.Server
	nc       *nats.Conn
	name     string
	once     sync.Once
	warnings []string

	leafHost string
	leafPort int
}

// StartBroker starts a broker and waits (at most until ctx ends, or 10 s)
// until it accepts connections.
func StartBroker(ctx context.Context, o BrokerOptions) (*Broker, error) {
	host, port, err := splitHostPort(o.Listen, "127.0.0.1", 4222)
	if err != nil {
		return nil, fmt.Errorf("broker: --listen %q: %w", o.Listen, err)
	}
	warnings, err := o.safeDefaults(host)
	if err != nil {
		return nil, err
	}
	so := &server.Options{Host: host, Port: port, ServerName: o.Name, NoSigs: true, NoLog: o.Logf == nil,
		MaxPayload: 8 << 20, WriteDeadline: 10 * time.Second}
	if so.ServerName == "" {
		so.ServerName = fmt.Sprintf("broker-%d", port)
	}
	if o.StoreDir != "" {
		so.JetStream, so.StoreDir = true, o.StoreDir
	}
	if o.LeafListen != "" {
		lh, lp, err := splitHostPort(o.LeafListen, "127.0.0.1", 7422)
		if err != nil {
			return nil, fmt.Errorf("broker: --leaf-listen %q: %w", o.LeafListen, err)
		}
		if lp < 0 { // the server does not report a random leaf port: pick one
			if lp, err = freePort(lh); err != nil {
				return nil, fmt.Errorf("broker: --leaf-listen %q: %w", o.LeafListen, err)
			}
		}
		so.LeafNode.Host, so.LeafNode.Port = lh, lp
	}
	if o.Parent != "" {
		u, err := url.Parse(o.Parent)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("broker: --parent %q: expected a URL such as nats-leaf://host:7422", o.Parent)
		}
		if u.Scheme == "nats" {
			u.Scheme = "nats-leaf"
		}
		if u.User == nil {
			switch c := o.ParentCreds; {
			case c.User != "":
				u.User = url.UserPassword(c.User, c.Password)
			case c.Token != "":
				u.User = url.UserPassword("token", c.Token)
			}
		}
		rl := &server.RemoteLeafOpts{URLs: []*url.URL{u}}
		if o.ParentCreds.TLS.Enabled() {
			tc, err := clientTLS(o.ParentCreds.TLS)
			if err != nil {
				return nil, fmt.Errorf("broker: parent TLS: %w", err)
			}
			rl.TLS, rl.TLSConfig = true, tc
		}
		so.LeafNode.Remotes = append(so.LeafNode.Remotes, rl)
		so.LeafNode.ReconnectInterval = 500 * time.Millisecond
	}
	if o.TLS.Enabled() {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: o.TLS.Cert, KeyFile: o.TLS.Key, CaFile: o.TLS.CA, Verify: o.TLS.CA != ""})
		if err != nil {
			return nil, fmt.Errorf("broker: TLS: %w", err)
		}
		so.TLSConfig, so.TLS, so.TLSVerify = tc, true, o.TLS.CA != ""
		if o.LeafListen != "" {
			so.LeafNode.TLSConfig = tc
		}
	}
	// The broker's own connection (it answers the tree's broker queries)
	// presents a key made for it now, allowed only that.
	var internal []nats.Option
	if o.Auth != nil {
		if err := o.Auth.check(); err != nil {
			return nil, fmt.Errorf("broker: auth%w", err)
		}
		serverAuth(so, o.Auth)
		if o.LeafListen != "" && len(so.LeafNode.Users) == 0 {
			return nil, errors.New("broker: --leaf-listen with --auth: expected a user with role broker (or admin) in the auth file for child brokers to present, found none")
		}
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("broker: %w", err)
		}
		so.Nkeys = append(so.Nkeys, &server.NkeyUser{Nkey: pub, Permissions: brokerPerms.server()})
		internal = append(internal, nats.Nkey(pub, kp.Sign))
	}
	s, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if o.Logf != nil {
		s.SetLoggerV2(&logger{o.Logf}, false, false, false)
		for _, w := range warnings {
			o.Logf("%s", w)
		}
	}
	go s.Start()
	wait := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	if !s.ReadyForConnections(wait) {
		s.Shutdown()
		return nil, fmt.Errorf("broker: not ready to accept connections on %s within %s", net.JoinHostPort(host, strconv.Itoa(port)), wait)
	}
	b := &Broker{opts: o, s: s, name: so.ServerName, leafHost: so.LeafNode.Host, leafPort: so.LeafNode.Port, warnings: warnings}
	// An in-process connection answers the tree's broker queries.
	copts := []nats.Option{nats.InProcessServer(s), nats.Name("broker " + b.name), nats.CustomInboxPrefix(brokerInbox)}
	if o.TLS.Enabled() {
		// The in-process pipe to itself needs no certificate check.
		copts = append(copts, nats.Secure(&tls.Config{InsecureSkipVerify: true}))
		if o.TLS.CA != "" { // mutual TLS: present the broker's own certificate
			copts = append(copts, nats.ClientCert(o.TLS.Cert, o.TLS.Key))
		}
	}
	copts = append(copts, internal...)

	nc, err := nats.Connect(s.ClientURL(), copts...)
	if err != nil {
		s.Shutdown()
		return nil, fmt.Errorf("broker: internal connection: %w", err)
	}
	b.nc = nc
	if _, err := nc.Subscribe(subjectBrokers, func(m *nats.Msg) {
		data, _ := json.Marshal(b.Info())
		_ = m.Respond(data)
	}); err != nil {
		b.Shutdown()
		return nil, fmt.Errorf("broker: %w", err)
	}
	if o.StoreDir != "" {
		if _, err := nc.QueueSubscribe(ckptOpenSubject("*"), ckptQueue, b.openCheckpoints); err != nil {
			b.Shutdown()
			return nil, fmt.Errorf("broker: %w", err)
		}
	}
	if err := nc.Flush(); err != nil {
		b.Shutdown()
		return nil, fmt.Errorf("broker: %w", err)
	}
	return b, nil
}

// ckptOpenReply answers a ckpt.open request: the user's bucket, or why
// it could not be made.
type ckptOpenReply struct {
	Bucket string `json:"bucket"`
	Error  string `json:"error,omitempty"`
}

// openCheckpoints makes the checkpoint bucket of the user whose
// sluice.u.USER.ckpt.open request m is (clients may not create streams:
// subjects.go says why), and answers with its name.
func (b *Broker) openCheckpoints(m *nats.Msg) {
	rep := ckptOpenReply{}
	user, err := ckptOpenUser(m.Subject)
	if err == nil {
		rep.Bucket = CheckpointBucket(user)
		err = createCheckpointBucket(b.nc, user)
	}
	if err != nil {
		rep.Error = fmt.Sprintf("broker %s: %v", b.name, err)
	}
	data, _ := json.Marshal(rep)
	_ = m.Respond(data)
}

// createCheckpointBucket creates (or keeps) user's checkpoint bucket on the
// JetStream that nc reaches.
func createCheckpointBucket(nc *nats.Conn, user string) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bucket := CheckpointBucket(user)
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket, Description: "sluice checkpoints of user " + user, Storage: jetstream.FileStorage}); err != nil {
		return fmt.Errorf("creating checkpoint bucket %s: %w", bucket, err)
	}
	return nil
}

// clientTLS is the TLS configuration of a connection to a broker (a
// child's to its parent): the CA verifies the broker's certificate; Cert
// and Key, when set, are presented to it.
func clientTLS(f TLSFiles) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, err
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: expected PEM certificates, found none", f.CA)
		}
	}
	if f.Cert != "" || f.Key != "" {
		c, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return tc, nil
}

// safeDefaults refuses what would open the tree to anyone: listening
// beyond loopback without Auth, or joining an authenticated parent
// without Auth (the parent's users would be reachable from this broker's
// anonymous connections). With Insecure it returns warnings instead.
func (o *BrokerOptions) safeDefaults(host string) ([]string, error) {
	var warnings []string
	listen := []string{host, ""}
	if o.LeafListen != "" {
		lh, _, err := splitHostPort(o.LeafListen, "127.0.0.1", 7422)
		if err != nil {
			return nil, fmt.Errorf("broker: --leaf-listen %q: %w", o.LeafListen, err)
		}
		listen[1] = lh
	}
	w, err := CheckExposure("broker", listen, o.Auth != nil, o.Insecure)
	if err != nil {
		return nil, err
	}
	if w != "" {
		warnings = append(warnings, w)
	}
	if o.Parent != "" && o.Auth == nil && o.parentAuthenticated() {
		if !o.Insecure {
			return nil, errors.New("broker: refusing to join a parent that requires credentials without --auth: this broker's connections would reach the parent's tree unauthenticated, with every right; give --auth FILE (the parent's auth file), or pass --insecure to accept the risk")
		}
		warnings = append(warnings, "broker: warning: joining a parent that requires credentials without --auth (--insecure): anyone who reaches this broker can list and run jobs on every worker of the tree")
	}
	if !o.TLS.Enabled() {
		for _, h := range listen {
			if h != "" && !IsLoopback(h) {
				warnings = append(warnings, fmt.Sprintf("broker: warning: listening on %s without TLS: credentials and data cross the network in clear (--tls auto makes a CA and a certificate)", h))
				break
			}
		}
	}
	return warnings, nil
}

// parentAuthenticated reports whether the broker presents credentials to
// its parent (so the parent requires them).
func (o *BrokerOptions) parentAuthenticated() bool {
	if !o.ParentCreds.Empty() {
		return true
	}
	u, err := url.Parse(o.Parent)
	return err == nil && u.User != nil
}

// Warnings returns what the broker warned about when it started (also
// given to Logf): the risks --insecure accepted, a listener without TLS.
func (b *Broker) Warnings() []string { return append([]string(nil), b.warnings...) }

// Name returns the broker's name.
func (b *Broker) Name() string { return b.name }

// ClientURL returns the URL clients and workers connect to.
func (b *Broker) ClientURL() string { return b.s.ClientURL() }

// LeafURL returns the URL child brokers give as --parent ("" without
// --leaf-listen).
func (b *Broker) LeafURL() string {
	if b.opts.LeafListen == "" {
		return ""
	}
	return "nats-leaf://" + net.JoinHostPort(b.leafHost, strconv.Itoa(b.leafPort))
}

// Info returns the broker's name and its parent's.
func (b *Broker) Info() BrokerInfo {
	bi := BrokerInfo{Name: b.name}
	if b.opts.Parent == "" {
		return bi
	}
	if lz, err := b.s.Leafz(nil); err == nil {
		for _, l := range lz.Leafs {
			if !l.IsSpoke {
				continue
			}
			bi.Parent = l.Name
		}
	}
	return bi
}

// ParentConnected reports whether a broker with a parent has its leaf-node
// connection up (true for a root).
func (b *Broker) ParentConnected() bool {
	if b.opts.Parent == "" {
		return true
	}
	return b.Info().Parent != ""
}

// Shutdown stops the broker; connections to it are closed.
func (b *Broker) Shutdown() {
	b.once.Do(func() {
		if b.nc != nil {
			b.nc.Close()
		}
		b.s.Shutdown()
		b.s.WaitForShutdown()
	})
}

// Wait blocks until the broker is shut down or ctx ends.
func (b *Broker) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { b.s.WaitForShutdown(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		b.Shutdown()
		<-done
		return ctx.Err()
	}
}

func splitHostPort(s, defHost string, defPort int) (string, int, error) {
	if s == "" {
		return defHost, defPort, nil
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, errors.New("expected HOST:PORT")
	}
	if h == "" {
		h = defHost
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("port %q: expected 0..65535", p)
	}
	if n == 0 {
		n = -1 // the server's "random port"
	}
	return h, n, nil
}

type logger struct{ f func(string, ...any) }

func (l *logger) Noticef(format string, v ...any) { l.f("broker: "+format, v...) }
func (l *logger) Warnf(format string, v ...any)   { l.f("broker: warning: "+format, v...) }
func (l *logger) Fatalf(format string, v ...any)  { l.f("broker: fatal: "+format, v...) }
func (l *logger) Errorf(format string, v ...any)  { l.f("broker: error: "+format, v...) }
func (l *logger) Debugf(format string, v ...any)  {}
func (l *logger) Tracef(format string, v ...any)  {}

// freePort returns a TCP port free on host now.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
