// Package logging holds the log conventions every coin executable shares: log/slog with
// key=value lines, the levels error, warn, info, debug and trace, TRACE named as such, and a
// level per subsystem.
//
// # Overview
//
// ParseLevel reads one level; New builds the key=value logger at that level; NameTrace is
// the ReplaceAttr step for callers that build their own handler options.
//
// A subsystem is the value of the SubsystemKey ("sys") attribute a package gives its logger
// with With (lib/p2p's logger is With(SubsystemKey, "p2p")); records of loggers without one belong
// to DefaultSubsystem ("node"). ParseLevels reads btcd's --debuglevel habit: a level for
// everything, levels per subsystem, or both ("info,p2p=debug"), refusing subsystems the
// program does not name. NewLevels builds the logger that gives each subsystem its level:
// one text handler, behind a filter whose level follows the subsystem attribute. Its lines
// are New's.
//
// One log style for every daemon (coin-node, coin-miner, coin-faucetd): --log-level as
// above, --log-format text|json (ParseFormat; NewFormat is NewLevels with a JSON handler
// for json, the same keys: time, level, msg, sys and the record's own) and --log-file
// (FileFlag): off by default; a bare --log-file writes the daemon's default file
// (coin-node: <data-dir>/node.log, the spec's file, as before), --log-file=PATH any file.
// Either way the records also go to standard error. Output.Open builds that logger.
//
// # Errors
//
// ParseLevel fails for a level other than error, warn, info, debug or trace; ParseFormat for
// a format other than text or json; Output.Open when the log file cannot be opened; ParseLevels
// also for an unknown or repeated subsystem, a subsystem without a level, or two levels for
// everything.
package logging
