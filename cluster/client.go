package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// Client is a connection to a broker, from which it sees the whole tree.
type Client struct {
	nc   *nats.Conn
	url  string
	user string // names the client's subjects: sluice.u.USER.>, _INBOX_USER.>

	mu   sync.Mutex
	lost error // why the connection went away, once it did
}

// Connect joins the tree at the broker url (nats://host:port; credentials
// may be in the URL or in c).
func Connect(ctx context.Context, url string, c Credentials) (*Client, error) {
	user, err := c.userName(url)
	if err != nil {
		return nil, fmt.Errorf("connecting to broker %s: %w", redact(url), err)
	}
	cl := &Client{url: url, user: user}
	nc, err := dial(ctx, url, "sluice client", c)
	if err != nil {
		return nil, err
	}
	cl.nc = nc
	if err := cl.checkPermissions(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) {
		cl.mu.Lock()
		if cl.lost == nil {
			cl.lost = fmt.Errorf("lost the connection to broker %s: %v", redact(url), err)
		}
		cl.mu.Unlock()
	})
	return cl, nil
}

// User returns the name the client goes by: its jobs' subjects are
// sluice.u.USER.>, its replies arrive on _INBOX_USER.>.
func (c *Client) User() string { return c.user }

// checkPermissions subscribes to the client's own subjects once: a broker
// whose auth file names this connection otherwise (an nkey user listed
// with a user name that the client did not give) refuses, and the client
// says so now rather than with a request that times out.
func (c *Client) checkPermissions(ctx context.Context) error {
	subj := jobSubject(c.user, "check", "x")
	sub, err := c.nc.SubscribeSync(subj)
	if err != nil {
		return fmt.Errorf("connecting to broker %s: %w", redact(c.url), err)
	}
	defer sub.Unsubscribe()
	// The server answers a refused subscription with an error before the
	// flush's pong, and the connection records it as its last error.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.nc.FlushWithContext(fctx); err != nil {
		return fmt.Errorf("connecting to broker %s: %w", redact(c.url), err)
	}
	if err := c.nc.LastError(); errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subj) {
		return fmt.Errorf("connecting to broker %s as user %s: the broker does not let this connection use that user's subjects (%s.>): the auth file names it otherwise (an nkey user with a user: name also gives --user NAME), or its role is not client, worker or admin: %w", redact(c.url), c.user, subjectUser+"."+c.user, err)
	}
	return nil
}

// explainTLS adds the remedy to a connection refused because the
// broker's certificate is signed by an authority the connection does not
// trust.
func explainTLS(err error) error {
	var ua x509.UnknownAuthorityError
	var cv *tls.CertificateVerificationError
	if errors.As(err, &ua) || errors.As(err, &cv) {
		return fmt.Errorf("the broker's TLS certificate is not signed by an authority this side trusts: give --tls-ca CA.pem (the CA the broker printed at its start, e.g. DIR/ca.pem of sluice broker --tls auto): %w", err)
	}
	return err
}

// Close leaves the tree.
func (c *Client) Close() { c.nc.Close() }

// Conn returns the NATS connection.
func (c *Client) Conn() *nats.Conn { return c.nc }

// gather publishes a request on subj and collects replies until none came
// for quiet, or wait passed.
func (c *Client) gather(ctx context.Context, subj string, data []byte, quiet, wait time.Duration) ([][]byte, error) {
	inbox := c.nc.NewRespInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishRequest(subj, inbox, data); err != nil {
		return nil, err
	}
	start := time.Now()
	end := start.Add(wait)
	var out [][]byte
	for {
		d := min(quiet, time.Until(end))
		if d <= 0 {
			return out, nil
		}
		m, err := sub.NextMsg(d)
		if err == nats.ErrTimeout {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if len(out) == 0 {
			// A slow first answer (a loaded host, a long way through the
			// tree) means later ones are slow too: wait longer for them.
			quiet = max(quiet, 3*time.Since(start))
		}
		out = append(out, m.Data)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
}

// Brokers lists the brokers of the tree.
func (c *Client) Brokers(ctx context.Context) ([]BrokerInfo, error) {
	rs, err := c.gather(ctx, subjectBrokers, nil, 300*time.Millisecond, 3*time.Second)
	if err != nil {
		return nil, fmt.Errorf("querying brokers: %w", err)
	}
	var bs []BrokerInfo
	for _, r := range rs {
		var b BrokerInfo
		if json.Unmarshal(r, &b) == nil {
			bs = append(bs, b)
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
	return bs, nil
}

// Workers lists the workers of the tree, sorted by name.
func (c *Client) Workers(ctx context.Context) ([]WorkerInfo, error) {
	subj, err := micro.ControlSubject(micro.InfoVerb, ServiceName, "")
	if err != nil {
		return nil, err
	}
	rs, err := c.gather(ctx, subj, nil, 300*time.Millisecond, 3*time.Second)
	if err != nil {
		return nil, fmt.Errorf("querying workers: %w", err)
	}
	names := map[string]bool{}
	for _, r := range rs {
		var in micro.Info
		if json.Unmarshal(r, &in) == nil && in.Metadata["worker"] != "" {
			names[in.Metadata["worker"]] = true
		}
	}
	var (
		mu   sync.Mutex
		ws   []WorkerInfo
		errs []string
		wg   sync.WaitGroup
	)
	for name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wi, err := c.Worker(ctx, name)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err.Error())
				return
			}
			ws = append(ws, wi)
		}()
	}
	wg.Wait()
	sort.Slice(ws, func(i, j int) bool { return ws[i].Name < ws[j].Name })
	if len(ws) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("querying workers: %s", strings.Join(errs, "; "))
	}
	return ws, nil
}

// Worker asks one worker for its info.
func (c *Client) Worker(ctx context.Context, name string) (WorkerInfo, error) {
	var wi WorkerInfo
	if err := checkWorkerName(name); err != nil {
		return wi, err // a wildcard would ask every worker
	}
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, workerSubject(name, "info"), nil)
	if err != nil {
		return wi, fmt.Errorf("worker %s: %w", name, err)
	}
	if err := json.Unmarshal(m.Data, &wi); err != nil {
		return wi, fmt.Errorf("worker %s: bad info: %w", name, err)
	}
	return wi, nil
}

// Devices lists every device of the tree with the worker lending it and
// the broker path (root first) that reaches it.
func (c *Client) Devices(ctx context.Context) ([]RemoteDevice, error) {
	// Both queries wait for late answers: ask the two at once.
	var bs []BrokerInfo
	var berr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		bs, berr = c.Brokers(ctx)
	}()
	ws, err := c.Workers(ctx)
	<-done
	if err != nil {
		return nil, err
	}
	if berr != nil {
		return nil, berr
	}
	parent := map[string]string{}
	for _, b := range bs {
		parent[b.Name] = b.Parent
	}
	var ds []RemoteDevice
	for _, w := range ws {
		path := w.Broker
		seen := map[string]bool{path: true}
		for p := parent[path]; p != "" && !seen[p]; p = parent[p] {
			seen[p] = true
			path = p + "/" + path
		}
		for _, d := range w.Devices {
			ds = append(ds, RemoteDevice{Info: d, Worker: w.Name, Path: path, Limits: w.Limits, Jobs: w.Jobs, DataAddr: w.DataAddr})
		}
	}
	return ds, nil
}

// Query lists the devices meeting the requirements.
func (c *Client) Query(ctx context.Context, reqs string) ([]RemoteDevice, error) {
	rs, err := ParseRequirements(reqs)
	if err != nil {
		return nil, err
	}
	ds, err := c.Devices(ctx)
	if err != nil {
		return nil, err
	}
	var out []RemoteDevice
	for _, d := range ds {
		if d.Matches(rs) {
			out = append(out, d)
		}
	}
	return out, nil
}
