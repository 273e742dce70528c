package main

import (
	"fmt"
	"io"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/nisim/nisim/internal/outpath"
	"github.com/nisim/nisim/verify/scenario"
)

// jsonOutput is run's --json output: the file is created before the run
// (an unwritable path fails before anything is simulated) and written at
// the end whatever the run did, a failed run included (scenario.JSONReport
// carries the failure); "-" writes to standard output instead. A nil
// *jsonOutput (no --json) does nothing.
type jsonOutput struct {
	path   string
	file   *atomicfile.File
	stdout io.Writer
}

// openJSON prepares the --json output path (already checked by
// outpath.Check with the other outputs); "" is no output.
func openJSON(path string, stdout io.Writer) (*jsonOutput, error) {
	switch path {
	case "":
		return nil, nil
	case outpath.Stdout:
		return &jsonOutput{path: path, stdout: stdout}, nil
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--json: %w", err)
	}
	return &jsonOutput{path: path, file: f}, nil
}

// write renders the run's report and writes it (renaming the file into
// place); an error is an output that could not be written.
func (j *jsonOutput) write(r scenario.JSONRun) error {
	if j == nil {
		return nil
	}
	rep, err := scenario.NewJSONReport(r)
	var b []byte
	if err == nil {
		b, err = rep.Marshal()
	}
	if err != nil {
		j.abort()
		return fmt.Errorf("--json %s: %w", j.path, err)
	}
	if j.file == nil {
		_, err = j.stdout.Write(b)
		return err
	}
	if _, err := j.file.Write(b); err != nil {
		j.abort()
		return fmt.Errorf("--json: writing %s: %w", j.path, err)
	}
	return j.file.Commit()
}

// abort removes an unwritten file.
func (j *jsonOutput) abort() {
	if j != nil && j.file != nil {
		j.file.Abort()
	}
}

// configure applies the --config file and the --set values to p as
// scenario.Configure does, reading the file once (standard input, for
// --config -, cannot be read again), and returns where each value came
// from.
func configure(p scenario.Params, file string, sets []string) (scenario.Sources, error) {
	var data []byte
	if file != "" {
		var err error
		if data, err = scenario.ReadConfig(file); err != nil {
			return scenario.Sources{}, err
		}
	}
	if err := scenario.ConfigureData(p, file, data, sets); err != nil {
		return scenario.Sources{}, err
	}
	return scenario.SourcesOfData(file, data, sets), nil
}
