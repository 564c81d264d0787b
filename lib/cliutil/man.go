package cliutil

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// manPage renders app as a section 1 man page (roff, man macros): NAME, SYNOPSIS with each
// global option and its value's placeholder ([--network NET]), DESCRIPTION, GLOBAL OPTIONS
// and COMMANDS (every visible command and subcommand with its usage line, description and
// own options). The placeholder of an option is the `quoted` word of its usage, as in --help,
// or VALUE.
func manPage(app *cli.App) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"%s\" \"User Commands\"\n", strings.ToUpper(app.Name), app.Name)
	b.WriteString(".nh\n.ad l\n")
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", roffText(app.Name), roffText(app.Usage))

	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B %s\n", roffText(app.Name))
	for _, f := range manFlags(app.Flags) {
		name, value := flagSynopsis(f)
		fmt.Fprintf(&b, "[%s%s]\n", name, strings.Replace(value, " ", `\ `, 1)) // no break inside
	}
	switch {
	case app.UsageText != "":
		b.WriteString(".br\n")
		fmt.Fprintf(&b, ".B %s\n", roffText(unescapeMarkdown(app.UsageText)))
	case hasVisible(app.Commands):
		fmt.Fprintf(&b, "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR...]\n")
	}

	if app.Description != "" {
		b.WriteString(".SH DESCRIPTION\n")
		b.WriteString(roffBlock(app.Description))
	}

	if fs := manFlags(app.Flags); len(fs) > 0 {
		b.WriteString(".SH GLOBAL OPTIONS\n")
		if hasVisible(app.Commands) {
			b.WriteString("Global options go before or after the command. ")
		}
		b.WriteString("A usage error (an unknown option or command, an option without its value) prints one line on\nstandard error and exits with status 2.\n")
		writeOptions(&b, fs)
	}

	if hasVisible(app.Commands) {
		b.WriteString(".SH COMMANDS\n")
		writeCommands(&b, app.Name, nil, app.Commands)
	}
	return b.String()
}

func hasVisible(cmds []*cli.Command) bool {
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			return true
		}
	}
	return false
}

func writeCommands(b *strings.Builder, appName string, path []string, cmds []*cli.Command) {
	for _, c := range cmds {
		if c.Hidden || c.Name == "help" {
			continue
		}
		p := append(append([]string{}, path...), c.Name)
		fmt.Fprintf(b, ".SS \"%s\"\n", roffText(strings.Join(p, " ")))
		usage := unescapeMarkdown(c.UsageText)
		if usage == "" {
			usage = appName + " [global options] " + strings.Join(p, " ")
			if len(manFlags(c.Flags)) > 0 {
				usage += " [options]"
			}
			if len(c.Subcommands) > 0 {
				usage += " COMMAND"
			}
			if c.ArgsUsage != "" {
				usage += " " + c.ArgsUsage
			}
		}
		b.WriteString(".PP\n.B\n" + roffText(usage) + "\n")
		if c.Usage != "" {
			b.WriteString(".PP\n" + roffText(c.Usage) + "\n")
		}
		if c.Description != "" {
			b.WriteString(roffBlock(c.Description))
		}
		writeOptions(b, manFlags(c.Flags))
		writeCommands(b, appName, p, c.Subcommands)
	}
}

// manFlags are the options a man page lists: not hidden, not --help, not the copies of the
// global options (listed once, under GLOBAL OPTIONS).
func manFlags(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		if cf, ok := f.(cli.CategorizableFlag); ok && cf.GetCategory() == GlobalCategory {
			continue
		}
		if isHelpFlag(f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// flagSynopsis is an option's names in bold (--name, -n) and its value in italics.
func flagSynopsis(f cli.Flag) (string, string) {
	var names []string
	for _, n := range f.Names() {
		names = append(names, "\\fB"+roffText(dashes(n))+"\\fR")
	}
	value := ""
	if df, ok := f.(cli.DocGenerationFlag); ok && df.TakesValue() {
		placeholder, _ := unquoteUsage(df.GetUsage())
		if placeholder == "" {
			placeholder = "VALUE"
		}
		if IsBoolFlag(f) {
			value = "[=\\fI" + roffText(placeholder) + "\\fR]"
		} else {
			value = " \\fI" + roffText(placeholder) + "\\fR"
		}
	}
	return strings.Join(names, ", "), value
}

func writeOptions(b *strings.Builder, flags []cli.Flag) {
	for _, f := range flags {
		name, value := flagSynopsis(f)
		fmt.Fprintf(b, ".TP\n%s%s\n", name, value)
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		_, usage := unquoteUsage(df.GetUsage())
		var notes []string
		if df.TakesValue() {
			def := df.GetDefaultText()
			if def == "" {
				def = df.GetValue()
			}
			if def != "" && def != `""` {
				notes = append(notes, "default: "+strings.Trim(def, `"`))
			}
		}
		if env := df.GetEnvVars(); len(env) > 0 {
			notes = append(notes, "environment: "+strings.Join(env, ", "))
		}
		if len(notes) > 0 {
			usage += " (" + strings.Join(notes, "; ") + ")"
		}
		b.WriteString(roffText(usage) + "\n")
	}
}

// roffBlock renders a description: paragraphs separated by blank lines, lines that start with
// white space (examples, tables) kept as they are in an indented example block.
func roffBlock(text string) string {
	var b strings.Builder
	lines := strings.Split(strings.Trim(text, "\n"), "\n")
	inPara := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.TrimSpace(line) == "":
			inPara = false
		case line[0] == ' ' || line[0] == '\t':
			// An indented block, blank lines inside it included.
			j := i
			for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || lines[j][0] == ' ' || lines[j][0] == '\t') {
				j++
			}
			block := lines[i:j]
			for len(block) > 0 && strings.TrimSpace(block[len(block)-1]) == "" {
				block = block[:len(block)-1]
			}
			indent := -1
			for _, l := range block {
				if strings.TrimSpace(l) == "" {
					continue
				}
				n := len(l) - len(strings.TrimLeft(l, " \t"))
				if indent < 0 || n < indent {
					indent = n
				}
			}
			b.WriteString(".RS 4\n.EX\n")
			for _, l := range block {
				if len(l) >= indent {
					l = l[indent:]
				}
				b.WriteString(roffText(strings.TrimRight(l, " ")) + "\n")
			}
			b.WriteString(".EE\n.RE\n")
			i = j - 1
			inPara = false
		default:
			if !inPara {
				b.WriteString(".PP\n")
				inPara = true
			}
			b.WriteString(roffText(line) + "\n")
		}
	}
	return b.String()
}

// roffText escapes text for roff: backslashes, hyphens (so options copy as typed), and a
// leading dot or quote that would start a request.
func roffText(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// unescapeMarkdown undoes the escapes of text written for urfave/cli's markdown man pages
// (coin-cli's usage lines: \<height\>).
func unescapeMarkdown(s string) string {
	return strings.NewReplacer(`\<`, "<", `\>`, ">", `\_`, "_", `\*`, "*").Replace(strings.TrimSpace(s))
}

// unquoteUsage is urfave/cli's reading of an option's usage: the first `quoted` word is the
// placeholder of its value, shown without the quotes.
func unquoteUsage(usage string) (string, string) {
	if i := strings.IndexByte(usage, '`'); i >= 0 {
		if j := strings.IndexByte(usage[i+1:], '`'); j >= 0 {
			name := usage[i+1 : i+1+j]
			return name, usage[:i] + name + usage[i+2+j:]
		}
	}
	return "", usage
}
