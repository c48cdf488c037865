package cli

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/simvis/simvis/live"
	"github.com/simvis/simvis/record"
)

// recordFlags are the recording flags of capture (--mcap), serve and
// mirror (--record).
type recordFlags struct{ o live.RecordOptions }

func (f *recordFlags) register(fs *flag.FlagSet, name string) {
	fs.StringVar(&f.o.Path, name, "", "record every cycle and sensor frame into this MCAP file (ROS 2 profile, docs/recordings.md)")
	fs.StringVar(&f.o.Compression, "record-compression", "zstd", "chunk compression of the recording: zstd or lz4")
	fs.BoolVar(&f.o.Realtime, "realtime", false, "stamp the recording with the wall clock, not scene time")
}

// readFlags are the bounds of reading a recording (play, info):
// record.ReadOptions in MiB; zero keeps the default, a negative value
// lifts the bound.
type readFlags struct {
	record, change, values, labels, kept, attachments float64
	messages                                          int
}

func (f *readFlags) register(fs *flag.FlagSet) {
	mib := func(v *float64, name string, def int64, what string) {
		fs.Float64Var(v, strings.TrimPrefix(name, "--"), 0, fmt.Sprintf("%s, MiB (default %g; <0: no limit)", what, float64(def)/(1<<20)))
	}
	mib(&f.record, record.FlagRecordMiB, record.MaxRecordBytes, "largest record of a recording read, a message that play republishes included")
	mib(&f.change, record.FlagChangeMiB, record.MaxChangeBytes, "largest recorded "+record.TopicChanges+" message (one command)")
	mib(&f.values, record.FlagValuesMiB, record.MaxValuesBytes, "largest recorded "+record.TopicValues+" message")
	mib(&f.labels, record.FlagLabelsMiB, record.MaxLabelsBytes, "largest recorded segmentation labels message")
	mib(&f.kept, record.FlagRecordingMiB, record.MaxKeptBytes, "most of a recording's change log, values, labels, schemas and channels held at once")
	mib(&f.attachments, record.FlagAttachmentsMiB, record.MaxAttachmentBytes, "most attachment bytes of a recording (its model files) read")
	fs.IntVar(&f.messages, strings.TrimPrefix(record.FlagMessages, "--"), 0, fmt.Sprintf("most change, values and labels messages of a recording held (default %d; <0: no limit)", record.MaxJSONMessages))
}

func (f *readFlags) options() (record.ReadOptions, error) {
	var o record.ReadOptions
	for _, b := range []struct {
		v   float64
		to  *int64
		flg string
	}{{f.record, &o.RecordBytes, record.FlagRecordMiB}, {f.change, &o.ChangeBytes, record.FlagChangeMiB},
		{f.values, &o.ValuesBytes, record.FlagValuesMiB}, {f.labels, &o.LabelsBytes, record.FlagLabelsMiB},
		{f.kept, &o.KeptBytes, record.FlagRecordingMiB}, {f.attachments, &o.AttachmentBytes, record.FlagAttachmentsMiB}} {
		switch {
		case math.IsNaN(b.v) || math.IsInf(b.v, 0) || b.v > 1<<40:
			return o, usagef("%s %v: want MiB (<0: no limit)", b.flg, b.v)
		case b.v < 0:
			*b.to = -1
		case b.v > 0:
			*b.to = max(1, int64(b.v*(1<<20)))
		}
	}
	o.Messages = f.messages
	return o, nil
}

// playShm is play's default region name: $SIMVIS_SHM, as for serve, else
// "play".
func playShm() string {
	if name := os.Getenv("SIMVIS_SHM"); name != "" {
		return name
	}
	return "play"
}

func infoCommand() *command {
	var asJSON bool
	var rdf readFlags
	return &command{
		name: "info", args: "FILE.mcap [--json] [recording bounds]",
		short: "describe a recording: topics, message counts, duration",
		summary: "Read a recording (any MCAP file; a file cut short is read up to its last whole\n" +
			"chunk) and print its profile, duration, each topic with its schema, message count\n" +
			"and rate, the attachments and simvis's metadata.",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
			rdf.register(fs)
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) != 1 {
				return usagef("want one FILE.mcap")
			}
			ropts, err := rdf.options()
			if err != nil {
				return err
			}
			// Counted from the summary and message indexes, or read as a
			// stream: no message or attachment data is held.
			rec, err := record.Info(args[0], ropts)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(w, rec.Report(args[0]))
			}
			return rec.Report(args[0]).WriteText(w)
		},
	}
}

func playCommand() *command {
	var o live.PlayOptions
	var nf natsFlags
	var ff foxgloveFlags
	var wb webFlags
	var lf limitFlags
	var rf recordFlags
	var rdf readFlags
	return &command{
		name: "play", args: "FILE.mcap [--rate X] [--start T] [--loop] [--paused] [--fast] [--rerender [-o DIR] [--record FILE.mcap]] [--shm NAME] [NATS flags] [--foxglove ADDR [Foxglove flags]] [--web ADDR [web flags]] [budget flags] [recording bounds]",
		short: "run a recording as a host: its scene, values and change log at their times",
		summary: "Rebuild the scene of a simvis MCAP recording (its change log, model files from its\n" +
			"attachments written to a private temporary directory) and run it as a host, as serve\n" +
			"does: clients, mirrors and viewers attach to it as to a live host. Each cycle (at the\n" +
			"recording's host rate) the playback position advances by one period times --rate and\n" +
			"the values and commands recorded up to it apply. With --rerender the sensors render\n" +
			"anew (published on NATS, written with -o, recorded with --record; a run that writes\n" +
			"-o or --record starts NATS only when a NATS flag asks for it). It stops at the\n" +
			"end unless --loop. Controls, one a line on standard input: " + live.PlayControls + ".\n" +
			"docs/recordings.md describes the recording and the controls.",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Shm, "shm", playShm(), "region name (/dev/shm/simvis-NAME) or path; $SIMVIS_SHM sets the default (else play)")
			fs.Float64Var(&o.Rate, "rate", 1, "playback speed factor")
			fs.Float64Var(&o.Start, "start", 0, "start at this many seconds into the recording")
			fs.BoolVar(&o.Loop, "loop", false, "start again at the end")
			fs.BoolVar(&o.Paused, "paused", false, "start paused (resume or step on standard input)")
			fs.BoolVar(&o.Fast, "fast", false, "run cycles as fast as possible")
			fs.BoolVar(&o.Rerender, "rerender", false, "render the sensors anew")
			fs.StringVar(&o.Out, "o", "", "with --rerender, write sensor outputs into DIR")
			nf.register(fs)
			ff.register(fs)
			wb.register(fs)
			lf.register(fs)
			rf.register(fs, "record")
			rdf.register(fs)
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) != 1 {
				return usagef("want one recording FILE.mcap")
			}
			if len(lf.packagePath) > 0 {
				return usagef("--package-path: play finds a URDF's packages in the recording only (docs/recordings.md)")
			}
			if o.Rate <= 0 {
				return usagef("--rate %v: want a speed factor in (0, 1000]", o.Rate)
			}
			if o.Rerender && (o.Out != "" || rf.o.Path != "") && !nf.o.Off {
				// Re-rendering into files: NATS only where a flag asks for it.
				asked := false
				for _, name := range []string{"nats", "listen", "name", "token", "user", "password", "tls-cert", "tls-key", "max-consumers"} {
					asked = asked || flagGiven(fs, name)
				}
				nf.o.Off = !asked
			}
			var err error
			if o.Limits, err = lf.limits(); err != nil {
				return err
			}
			if o.Read, err = rdf.options(); err != nil {
				return err
			}
			if o.NATS, err = nf.options(); err != nil {
				return err
			}
			if o.Foxglove, err = ff.options(); err != nil {
				return err
			}
			if o.Web, err = wb.options(); err != nil {
				return err
			}
			// URDF parts find their packages in the recording alone: no
			// --package-path reaches outside it (docs/trust.md).
			o.File, o.Record, o.Controls, o.Warnings, o.NewHost = args[0], rf.o, os.Stdin, warnings, newHost
			ctx, stop := interrupted()
			defer stop()
			return withLimitHint(live.Play(ctx, o, w))
		},
	}
}
