// Package hangguard holds the limit every test that runs a real engine CLI
// gives the engine (MR_TIMEOUT), so the tests agree on it.
package hangguard

// EngineTimeout is MR_TIMEOUT for a real engine CLI under test. It only
// stops a hung engine; it does not time one: a CLI start alone takes 2-4 s
// of CPU, and on a 2-core machine at load 30 one agent job took over two
// minutes. It stays under demo.DefaultStageTimeout, so in the e2e flows the
// engine's own timeout fires before the job process is killed (e2e tests it).
const EngineTimeout = "5m"
