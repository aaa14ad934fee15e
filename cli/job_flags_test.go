package cli

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// flagsJobRegistry has one job, "greet", with its own flags --greeting and
// --nats; what its builder saw is left in *seen.
func flagsJobRegistry(env map[string]string, seen *struct{ greeting, nats string }) *registry {
	r := newRegistry()
	r.env = func(name string) string { return env[name] }
	r.addFlagsJob("greet", "test job", func(fs *flag.FlagSet) JobBuilder {
		greeting := fs.String("greeting", "hello", "what to say")
		url := fs.String("nats", "", "NATS URL")
		return func(p JobParams) (*Job, error) {
			seen.greeting, seen.nats = *greeting, *url
			g := weir.NewGraph("greet")
			weir.ToSink(weir.Generate(g, "source", 1, func(i int64) int64 { return i }), "sink", weir.DiscardSink[int64](nil))
			return &Job{Graph: g}, nil
		}
	})
	return r
}

// TestJobFlagsAndEnvironment: a job's own flags parse with node run's; each
// flag the command line omits is read from WEIR_<NAME> (--nats from
// NATS_URL), and the command line wins over the environment.
func TestJobFlagsAndEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         map[string]string
		args        []string
		greeting    string
		nats        string
		interval    time.Duration
		parallelism int
	}{
		{"defaults", nil, []string{"greet"}, "hello", "", weir.DefaultCheckpointConfig().Interval, defaultParallelism},
		{"flags", nil, []string{"--greeting", "hi", "greet", "--parallelism", "3", "--nats", "nats://a:1"}, "hi", "nats://a:1", weir.DefaultCheckpointConfig().Interval, 3},
		{"environment", map[string]string{"WEIR_GREETING": "hey", "WEIR_CHECKPOINT_INTERVAL": "5s", "WEIR_PARALLELISM": "4", "NATS_URL": "nats://env:2"},
			[]string{"greet"}, "hey", "nats://env:2", 5 * time.Second, 4},
		{"flag over environment", map[string]string{"WEIR_GREETING": "hey", "WEIR_PARALLELISM": "4", "NATS_URL": "nats://env:2"},
			[]string{"greet", "--greeting=yo", "--parallelism", "1", "--nats", "nats://flag:3"}, "yo", "nats://flag:3", weir.DefaultCheckpointConfig().Interval, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen struct{ greeting, nats string }
			spec, err := flagsJobRegistry(tc.env, &seen).parseJob("run", tc.args, true)
			if err != nil {
				t.Fatal(err)
			}
			if seen.greeting != tc.greeting || seen.nats != tc.nats {
				t.Errorf("job saw --greeting %q --nats %q, want %q %q", seen.greeting, seen.nats, tc.greeting, tc.nats)
			}
			if spec.flags.checkpointInterval != tc.interval || spec.flags.params.Parallelism != tc.parallelism {
				t.Errorf("--checkpoint-interval %v --parallelism %d, want %v %d",
					spec.flags.checkpointInterval, spec.flags.params.Parallelism, tc.interval, tc.parallelism)
			}
		})
	}
}

// TestEnvironmentErrors: a value a flag refuses names the variable; a
// cluster node parsing submitted arguments ignores its own environment.
func TestEnvironmentErrors(t *testing.T) {
	var seen struct{ greeting, nats string }
	r := flagsJobRegistry(map[string]string{"WEIR_RECORDS": "many"}, &seen)
	_, err := r.parseJob("run", []string{"greet"}, true)
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `WEIR_RECORDS="many" (for --records)`) {
		t.Fatalf("error %v, want a usage error naming WEIR_RECORDS", err)
	}
	r = flagsJobRegistry(map[string]string{"WEIR_GREETING": "from env"}, &seen)
	if _, err := r.clusterJob("greet", []string{"--greeting=sent"}); err != nil {
		t.Fatal(err)
	}
	if seen.greeting != "sent" {
		t.Fatalf("cluster job saw --greeting %q, want the submitted %q", seen.greeting, "sent")
	}
}

// TestJobFlagClashIsAnError: a job flag that reuses a flag of node run is
// refused with its name.
func TestJobFlagClashIsAnError(t *testing.T) {
	r := newRegistry()
	r.addFlagsJob("clash", "test job", func(fs *flag.FlagSet) JobBuilder {
		fs.Int("records", 1, "clashes")
		return func(JobParams) (*Job, error) { return nil, errors.New("not built") }
	})
	_, err := r.parseJob("run", []string{"clash"}, true)
	if err == nil || !strings.Contains(err.Error(), "--records is already a flag of node") {
		t.Fatalf("error %v, want the clash named", err)
	}
}

// TestRunHelpListsJobFlags: `node run JOB --help` lists the job's own flags
// after node run's.
func TestRunHelpListsJobFlags(t *testing.T) {
	var seen struct{ greeting, nats string }
	r := flagsJobRegistry(nil, &seen)
	var out, errOut strings.Builder
	if err := r.run(context.Background(), []string{"greet", "--help"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Flags of job greet:") || !strings.Contains(out.String(), "-greeting") {
		t.Fatalf("help does not list the job's flags:\n%s", out.String())
	}
}
