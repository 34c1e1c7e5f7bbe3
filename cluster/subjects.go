package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Every NATS subject the cluster uses is named here, and so is every
// permission a role of the auth file gets on them (auth.go): a subject and
// the permission that guards it change together.
//
// A user's jobs live under the user's own prefix, sluice.u.USER.>:
//
//	sluice.u.USER.worker.NAME.run   run requests to worker NAME (request/reply)
//	sluice.u.USER.job.ID.WHAT       one job's data, credits, heartbeats,
//	                                cancel, result and snapshot requests
//	_INBOX_USER.>                   the user's replies (nats.CustomInboxPrefix)
//
// A client may publish and subscribe only under its own prefix and inbox:
// the NATS server enforces it (auth.go), so the user token of a run
// request's subject is the authenticated user, and the worker serves the
// job under that user's prefix. Shared, public subjects:
//
//	sluice.brokers             every broker answers with its BrokerInfo
//	sluice.worker.NAME.info    a worker's WorkerInfo (micro endpoint)
//	$SRV.>                     the micro services' discovery (workers)
//	sluice.flowmodel.NAME      flow-model requests (package flowmodel)
//
// A user's checkpoints (store.go) live in a JetStream object store of its
// own, bucket CheckpointBucket(USER) (stream OBJ_BUCKET, subjects
// $O.BUCKET.>). A client may read and write only its own bucket: the
// stream's info, direct gets and purges, and publishes under $O.BUCKET.>
// (checkpointPerms). It may not create a stream: a stream's subjects are
// whatever its creator asks, so a client that could create one could
// capture any other user's subjects. A broker with --store creates the
// bucket instead, when the user first asks on sluice.u.USER.ckpt.open.
const (
	subjectBrokers    = "sluice.brokers"
	subjectWorker     = "sluice.worker"
	subjectUser       = "sluice.u"
	subjectFlowModels = "sluice.flowmodel.>" // flowmodel.Subject's
	subjectServices   = "$SRV.>"             // micro's control subjects
	inboxPrefix       = "_INBOX_"
	brokerInbox       = "_SLUICE_BROKER" // the brokers' own connections' replies
	ckptQueue         = "sluice-ckpt"    // the brokers answering ckpt.open requests
)

// anonymous is the user name of a connection that presents no user (a
// broker without --auth): its jobs go under sluice.u.anonymous.
const anonymous = "anonymous"

// checkToken reports whether s can be one token of a subject: not empty,
// no dots, wildcards, spaces or control characters.
func checkToken(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s: expected a name, found none", what)
	}
	for _, r := range s {
		if r <= ' ' || r == '.' || r == '*' || r == '>' || r == 0x7f {
			return fmt.Errorf("%s %q: expected no dots, spaces, control characters, '*' or '>' (it becomes a NATS subject token)", what, s)
		}
	}
	return nil
}

// userPrefix is every subject of user's jobs: sluice.u.USER.>.
func userPrefix(user string) string { return subjectUser + "." + user + ".>" }

// userInbox is the inbox prefix of user's connections; replies to its
// requests arrive under userInbox(user) + ".>".
func userInbox(user string) string { return inboxPrefix + user }

// jobSubject is one subject of a job of user: sluice.u.USER.job.ID.WHAT.
func jobSubject(user, job, what string) string {
	return subjectUser + "." + user + ".job." + job + "." + what
}

// runSubject is where user asks worker to run an actor.
func runSubject(user, worker string) string {
	return subjectUser + "." + user + ".worker." + worker + ".run"
}

// runSubjectAny is the subject a worker serves run requests on: any user's.
func runSubjectAny(worker string) string { return runSubject("*", worker) }

// runUser returns the user whose prefix a run request's subject is under
// (the server let only that user publish there).
func runUser(subject string) (string, error) {
	t := strings.Split(subject, ".")
	if len(t) != 6 || t[0]+"."+t[1] != subjectUser || t[3] != "worker" || t[5] != "run" {
		return "", fmt.Errorf("run request on subject %q: expected %s", subject, runSubject("USER", "WORKER"))
	}
	if err := checkToken("user", t[2]); err != nil {
		return "", err
	}
	return t[2], nil
}

// ownerInbox reports whether reply is an inbox of user: where a run
// reply, which carries the job's data-path secret, may go.
func ownerInbox(user, reply string) bool {
	return strings.HasPrefix(reply, userInbox(user)+".")
}

// workerGroup is the prefix of a worker's public endpoints (info).
func workerGroup(worker string) string { return subjectWorker + "." + worker }

// workerSubject is a public endpoint of a worker: sluice.worker.NAME.WHAT.
func workerSubject(worker, what string) string { return workerGroup(worker) + "." + what }

// ckptOpenSubject is where user asks the brokers to make its checkpoint
// bucket: sluice.u.USER.ckpt.open.
func ckptOpenSubject(user string) string { return subjectUser + "." + user + ".ckpt.open" }

// ckptOpenUser returns the user of a ckpt.open request's subject (the
// server let only that user, or an admin, publish there).
func ckptOpenUser(subject string) (string, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || t[0]+"."+t[1] != subjectUser || t[3] != "ckpt" || t[4] != "open" {
		return "", fmt.Errorf("checkpoint bucket request on subject %q: expected %s", subject, ckptOpenSubject("USER"))
	}
	if err := checkToken("user", t[2]); err != nil {
		return "", err
	}
	return t[2], nil
}

// maxBucketUser is the longest user name a checkpoint bucket spells out.
const maxBucketUser = 64

// CheckpointBucket is the JetStream object store bucket that keeps user's
// checkpoints: sluice-ckpt-USER for a name of at most 64 letters, digits,
// '-' and '_' (what a bucket name may hold), else sluice-ckpt_ and the
// first 32 hex digits of the name's SHA-256 (the '_' keeps the two forms
// apart).
func CheckpointBucket(user string) string {
	plain := len(user) <= maxBucketUser
	for _, r := range user {
		plain = plain && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}
	if plain && user != "" {
		return "sluice-ckpt-" + user
	}
	sum := sha256.Sum256([]byte(user))
	return "sluice-ckpt_" + hex.EncodeToString(sum[:16])
}

// checkpointStream is the stream behind user's checkpoint bucket.
func checkpointStream(user string) string { return "OBJ_" + CheckpointBucket(user) }

// checkpointPerms are what a client may publish to use its own checkpoint
// bucket and nothing of another's: the stream's info, direct and plain
// message gets, purges, and the object store's subjects. No stream or
// consumer is created (a consumer's deliver subject, like a stream's
// subjects, is the creator's choice and unchecked by permissions).
func checkpointPerms(user string) []string {
	b, st := CheckpointBucket(user), checkpointStream(user)
	return []string{
		"$JS.API.STREAM.INFO." + st,
		"$JS.API.STREAM.MSG.GET." + st,
		"$JS.API.DIRECT.GET." + st,
		"$JS.API.DIRECT.GET." + st + ".>",
		"$JS.API.STREAM.PURGE." + st,
		"$O." + b + ".>",
	}
}

// Role is what a user of the auth file may do.
type Role string

// The roles of an auth file's users.
const (
	// RoleClient runs jobs: it publishes and subscribes under its own
	// prefix and inbox only, and may query brokers, workers and
	// flow-models.
	RoleClient Role = "client"
	// RoleWorker serves jobs: it takes any user's run requests, publishes
	// and subscribes on every user's job subjects, and answers requests.
	RoleWorker Role = "worker"
	// RoleAdmin may publish and subscribe everywhere (and connect child
	// brokers).
	RoleAdmin Role = "admin"
	// RoleBroker is a child broker's credential: accepted on the
	// leaf-node listener only, with the whole tree's traffic.
	RoleBroker Role = "broker"
)

// roles lists the roles in the order the errors name them.
var roles = []Role{RoleClient, RoleWorker, RoleAdmin, RoleBroker}

// permissions returns what role may publish and subscribe to as user;
// nil allows everything.
func (r Role) permissions(user string) *subjectPerms {
	inbox := userInbox(user) + ".>"
	switch r {
	case RoleClient:
		return &subjectPerms{
			pub: append([]string{userPrefix(user), subjectBrokers, workerSubject("*", "info"), subjectServices, subjectFlowModels}, checkpointPerms(user)...),
			sub: []string{userPrefix(user), inbox},
		}
	case RoleWorker:
		jobs := subjectUser + ".*.job.>"
		return &subjectPerms{
			pub:       []string{jobs},
			sub:       []string{jobs, runSubject("*", "*"), workerSubject("*", "info"), subjectServices, subjectFlowModels, inbox},
			responses: true,
		}
	}
	return nil // admin, broker
}

// subjectPerms are a role's allowed subjects; responses lets it answer
// the requests it received (on the requester's inbox, once each).
type subjectPerms struct {
	pub, sub  []string
	responses bool
}

// brokerPerms are the broker's own connection's: it answers sluice.brokers
// and, with --store, users' ckpt.open requests by making their checkpoint
// buckets (JetStream streams).
var brokerPerms = &subjectPerms{
	pub:       []string{"$JS.API.STREAM.CREATE.*", "$JS.API.STREAM.UPDATE.*", "$JS.API.STREAM.INFO.*"},
	sub:       []string{subjectBrokers, ckptOpenSubject("*"), brokerInbox + ".>"},
	responses: true,
}
