package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
)

// credFlags are the credentials a client, worker or child broker presents.
type credFlags struct {
	user, password, token string
	nkey                  string
	ca, cert, key         string
}

func (c *credFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&c.user, "user", "", "user name for the broker, which also names this connection's subjects (or in the URL: nats://user:password@host:port)")
	fl.StringVar(&c.password, "password", "", "password for the broker (default $SLUICE_PASSWORD)")
	fl.StringVar(&c.token, "token", "", "token for a NATS server that takes one (default $SLUICE_TOKEN; sluice brokers take users: --user)")
	fl.StringVar(&c.nkey, "nkey", "", "file holding a user nkey seed (SU...), for a broker whose auth file lists its public key (with --user NAME when the entry has a name)")
	fl.StringVar(&c.ca, "tls-ca", "", "CA certificate (PEM) that verifies the broker (sluice broker --tls auto prints it); the connection then requires TLS")
	fl.StringVar(&c.cert, "tls-cert", "", "client certificate (PEM), when the broker verifies clients")
	fl.StringVar(&c.key, "tls-key", "", "client key (PEM)")
}

func (c *credFlags) creds() cluster.Credentials {
	cr := cluster.Credentials{User: c.user, Password: c.password, Token: c.token, NKeySeed: c.nkey,
		TLS: cluster.TLSFiles{CA: c.ca, Cert: c.cert, Key: c.key}}
	if cr.Password == "" && cr.User != "" {
		cr.Password = os.Getenv("SLUICE_PASSWORD")
	}
	if cr.Token == "" && cr.User == "" {
		cr.Token = os.Getenv("SLUICE_TOKEN")
	}
	return cr
}

// connectRemote joins the tree at url and returns the remote executor for
// sluice run, and how to leave.
func connectRemote(cmd *cobra.Command, url string, c credFlags) (*cluster.Executor, func(), error) {
	cl, err := cluster.Connect(cmd.Context(), url, c.creds())
	if err != nil {
		return nil, nil, err
	}
	return cluster.NewExecutor(cl, cluster.ExecutorOptions{}), cl.Close, nil
}

func newBroker() *cobra.Command {
	var (
		o        cluster.BrokerOptions
		authFile string
		parent   credFlags
		verbose  bool
		tlsMode  string
		tlsDir   string
	)
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run a broker: an embedded NATS server that workers and clients join",
		Long: `broker runs an embedded NATS server. Workers (sluice worker) and clients
(sluice run --broker, sluice devices --broker) connect to it. With --leaf-listen
it accepts child brokers; with --parent it joins a parent broker as a leaf node,
so brokers form a tree: a request reaches any worker below, and replies come
back the same way. --auth FILE requires credentials from everyone, child brokers
included, and gives each user its role (client, worker, admin, broker): a client
sees and touches only its own jobs. --tls auto makes a CA and a certificate and
prints the flags workers and clients trust it with; --tls-cert and --tls-key
serve TLS with your own. Without --auth it listens on loopback only, unless
--insecure. It runs until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if authFile != "" {
				a, err := cluster.LoadAuth(authFile)
				if err != nil {
					return err
				}
				o.Auth = a
			}
			o.ParentCreds = parent.creds()
			stderr := cmd.ErrOrStderr()
			caFile := ""
			switch tlsMode {
			case "":
			case "auto":
				if o.TLS.Cert != "" || o.TLS.Key != "" {
					return fmt.Errorf("broker: --tls auto makes its own certificate: expected no --tls-cert or --tls-key with it")
				}
				if tlsDir == "" {
					tlsDir = o.StoreDir
				}
				files, ca, err := cluster.AutoTLS(tlsDir, []string{o.Listen, o.LeafListen})
				if err != nil {
					return fmt.Errorf("broker: %w", err)
				}
				o.TLS.Cert, o.TLS.Key, caFile = files.Cert, files.Key, ca
			default:
				return fmt.Errorf("broker: --tls %q: expected auto (or --tls-cert and --tls-key for your own certificate)", tlsMode)
			}
			o.Logf = brokerLog(stderr, verbose)
			b, err := cluster.StartBroker(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "broker %s: clients and workers at %s\n", b.Name(), b.ClientURL())
			if u := b.LeafURL(); u != "" {
				fmt.Fprintf(stderr, "broker %s: child brokers at %s\n", b.Name(), u)
			}
			if caFile != "" {
				abs, err := filepath.Abs(caFile)
				if err != nil {
					abs = caFile
				}
				url := b.ClientURL()
				fmt.Fprintf(stderr, "broker %s: TLS with the CA %s; workers and clients trust it with --tls-ca:\n", b.Name(), abs)
				fmt.Fprintf(stderr, "  sluice worker --broker %s --tls-ca %s --user USER --password PASSWORD\n", url, abs)
				fmt.Fprintf(stderr, "  sluice devices --broker %s --tls-ca %s --user USER --password PASSWORD\n", url, abs)
				if u := b.LeafURL(); u != "" {
					fmt.Fprintf(stderr, "  sluice broker --parent %s --parent-tls-ca %s --parent-user USER --parent-password PASSWORD --auth FILE\n", u, abs)
				}
			}
			if o.Parent != "" {
				fmt.Fprintf(stderr, "broker %s: joining parent %s\n", b.Name(), o.Parent)
				go watchParent(cmd.Context(), b, o.Parent, stderr)
			}
			_ = b.Wait(cmd.Context())
			fmt.Fprintf(stderr, "broker %s: stopped\n", b.Name())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Name, "name", "", "broker name in the tree (default broker-PORT)")
	fl.StringVar(&o.Listen, "listen", "127.0.0.1:4222", "address for clients and workers (HOST:PORT; 0.0.0.0 for every interface)")
	fl.StringVar(&o.LeafListen, "leaf-listen", "", "address for child brokers (HOST:PORT), off when empty")
	fl.StringVar(&o.Parent, "parent", "", "parent broker's leaf URL (nats-leaf://[user:password@]host:port): join its tree")
	fl.StringVar(&authFile, "auth", "", "auth file (YAML: users: [{user, password or nkey, role: client|worker|admin|broker}]) required from every connection (docs/cluster.md)")
	fl.BoolVar(&o.Insecure, "insecure", false, "allow listening beyond loopback without --auth, or joining an authenticated parent without --auth (warns)")
	fl.StringVar(&tlsMode, "tls", "", "auto: make a CA and a certificate for the listen addresses (in --tls-dir, else --store) and serve TLS")
	fl.StringVar(&tlsDir, "tls-dir", "", "directory for --tls auto's CA (kept across restarts) and certificate (default: the --store directory)")
	fl.StringVar(&o.TLS.Cert, "tls-cert", "", "server certificate (PEM): serve TLS")
	fl.StringVar(&o.TLS.Key, "tls-key", "", "server key (PEM)")
	fl.StringVar(&o.TLS.CA, "tls-ca", "", "CA (PEM) that verifies client certificates (mutual TLS)")
	fl.StringVar(&parent.user, "parent-user", "", "user name for the parent broker (a user with role broker in its auth file)")
	fl.StringVar(&parent.password, "parent-password", "", "password for the parent broker")
	fl.StringVar(&parent.token, "parent-token", "", "token for a parent that takes one (sluice brokers take a broker user: --parent-user)")
	fl.StringVar(&parent.ca, "parent-tls-ca", "", "CA (PEM) that verifies the parent broker")
	fl.StringVar(&o.StoreDir, "store", "", "keep run checkpoints in JetStream with its files in this directory (sluice run --checkpoint-dir nats:NAME; they survive a restart)")
	fl.BoolVarP(&verbose, "verbose", "v", false, "log the server's notices")
	return cmd
}

// remoteDevices is sluice devices --broker: every device of the tree.
func remoteDevices(cmd *cobra.Command, url, require string, c credFlags, asJSON bool) error {
	if url == "" {
		return fmt.Errorf("devices: --require queries a broker tree: expected --broker URL too")
	}
	cl, err := cluster.Connect(cmd.Context(), url, c.creds())
	if err != nil {
		return err
	}
	defer cl.Close()
	var ds []cluster.RemoteDevice
	if require != "" {
		ds, err = cl.Query(cmd.Context(), require)
	} else {
		ds, err = cl.Devices(cmd.Context())
	}
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		if ds == nil {
			ds = []cluster.RemoteDevice{}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"devices": ds})
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tID\tKIND\tNAME\tUNITS\tMEMORY\tBROKER PATH\tLIMITS")
	for _, d := range ds {
		lim := "-"
		var l []string
		if d.Limits.MaxStream > 0 {
			l = append(l, "max-stream "+device.Size(d.Limits.MaxStream))
		}
		if d.Limits.MaxTime > 0 {
			l = append(l, "max-time "+d.Limits.MaxTime.String())
		}
		if len(l) > 0 {
			lim = strings.Join(l, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.Worker, d.ID, d.Kind, d.Name, d.ComputeUnits, device.Size(d.GlobalMem), d.Path, lim)
	}
	tw.Flush()
	if len(ds) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "no device matches")
	}
	return nil
}

// brokerLog is the server's log on stderr: every notice with -v; without
// it, errors and warnings only (a parent refusing this broker's
// credentials, say), each repeated message at most every 10 seconds.
func brokerLog(w io.Writer, verbose bool) func(string, ...any) {
	var mu sync.Mutex
	last := map[string]time.Time{}
	return func(format string, args ...any) {
		if !verbose && !strings.Contains(format, "error: ") && !strings.Contains(format, "fatal: ") && !strings.Contains(format, "warning: ") {
			return
		}
		msg := fmt.Sprintf(format, args...)
		key := connID.ReplaceAllString(msg, "")
		mu.Lock()
		defer mu.Unlock()
		if t, ok := last[key]; ok && time.Since(t) < 10*time.Second && !verbose {
			return
		}
		last[key] = time.Now()
		fmt.Fprintln(w, msg)
	}
}

// connID matches the connection numbers the server puts in its messages,
// which differ between repeats of one problem.
var connID = regexp.MustCompile(`\b[lcr]id:\d+`)

// watchParent says when the broker has joined its parent, and every 10
// seconds while it has not: the parent is down or refuses the credentials,
// and this broker's workers are not in the tree until it joins.
func watchParent(ctx context.Context, b *cluster.Broker, parent string, w io.Writer) {
	start := time.Now()
	warned := time.Time{}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	joined := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		switch up := b.ParentConnected(); {
		case up && !joined:
			joined = true
			fmt.Fprintf(w, "broker %s: joined parent %s\n", b.Name(), parent)
		case !up && joined:
			joined = false
			start, warned = time.Now(), time.Time{}
			fmt.Fprintf(w, "broker %s: lost parent %s; reconnecting\n", b.Name(), parent)
		case !up && time.Since(start) > 3*time.Second && time.Since(warned) > 10*time.Second:
			warned = time.Now()
			fmt.Fprintf(w, "broker %s: not joined to parent %s after %s (is it running? does it accept this broker's --parent-user/--parent-password or --parent-token?): still retrying; workers of this broker are not in the tree until it joins\n",
				b.Name(), parent, time.Since(start).Round(time.Second))
		}
	}
}
