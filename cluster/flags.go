package cluster

import (
	"flag"

	"github.com/nats-io/nats.go"
)

// RegisterConnFlags defines the --nats* flags on fs, writing into o. Values
// already in o are the defaults.
func RegisterConnFlags(fs *flag.FlagSet, o *ConnOptions) {
	fs.StringVar(&o.URL, "nats", o.URL,
		"NATS server URL(s) to join, comma-separated (nats://, tls://; default "+nats.DefaultURL+")")
	fs.StringVar(&o.Creds, "nats-creds", o.Creds,
		"credentials `FILE` (JWT and nkey seed) to authenticate to NATS")
	fs.StringVar(&o.User, "nats-user", o.User,
		"user name to authenticate to NATS (needs --nats-password)")
	fs.StringVar(&o.Password, "nats-password", o.Password,
		"password for --nats-user (visible to other local users in the process list; prefer --nats-creds)")
	fs.StringVar(&o.Token, "nats-token", o.Token,
		"token to authenticate to NATS (instead of --nats-user)")
	fs.StringVar(&o.CA, "nats-ca", o.CA,
		"CA certificate `FILE` (PEM) that signed the NATS server's TLS certificate; enables TLS")
	fs.StringVar(&o.Cert, "nats-cert", o.Cert,
		"client certificate `FILE` (PEM) for NATS servers that require mutual TLS (needs --nats-key)")
	fs.StringVar(&o.Key, "nats-key", o.Key,
		"private key `FILE` (PEM) of --nats-cert")
}
