package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

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
	fl.StringVar(&c.user, "user", "", "user name for the broker (or in the URL: nats://user:password@host:port)")
	fl.StringVar(&c.password, "password", "", "password for the broker (default $SLUICE_PASSWORD)")
	fl.StringVar(&c.token, "token", "", "token for the broker (default $SLUICE_TOKEN)")
	fl.StringVar(&c.nkey, "nkey", "", "file holding a user nkey seed (SU...), for a broker whose auth file lists its public key")
	fl.StringVar(&c.ca, "tls-ca", "", "CA certificate (PEM) that verifies the broker")
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
	)
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run a broker: an embedded NATS server that workers and clients join",
		Long: `broker runs an embedded NATS server. Workers (sluice worker) and clients
(sluice run --broker, sluice devices --broker) connect to it. With --leaf-listen
it accepts child brokers; with --parent it joins a parent broker as a leaf node,
so brokers form a tree: a request reaches any worker below, and replies come
back the same way. --auth FILE requires credentials (users with passwords, or a
token) from everyone, child brokers included; --tls-cert and --tls-key serve TLS.
It runs until interrupted.`,
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
			if verbose {
				o.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
			}
			b, err := cluster.StartBroker(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "broker %s: clients and workers at %s\n", b.Name(), b.ClientURL())
			if u := b.LeafURL(); u != "" {
				fmt.Fprintf(stderr, "broker %s: child brokers at %s\n", b.Name(), u)
			}
			if o.Parent != "" {
				fmt.Fprintf(stderr, "broker %s: joining parent %s\n", b.Name(), o.Parent)
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
	fl.StringVar(&authFile, "auth", "", "credentials file (YAML: users: [{user, password}] and/or nkeys: [public keys], or token: T) required from every connection")
	fl.StringVar(&o.TLS.Cert, "tls-cert", "", "server certificate (PEM): serve TLS")
	fl.StringVar(&o.TLS.Key, "tls-key", "", "server key (PEM)")
	fl.StringVar(&o.TLS.CA, "tls-ca", "", "CA (PEM) that verifies client certificates (mutual TLS)")
	fl.StringVar(&parent.user, "parent-user", "", "user name for the parent broker")
	fl.StringVar(&parent.password, "parent-password", "", "password for the parent broker")
	fl.StringVar(&parent.token, "parent-token", "", "token for the parent broker")
	fl.StringVar(&parent.ca, "parent-tls-ca", "", "CA (PEM) that verifies the parent broker")
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
