<?php
// A fault-injecting TCP proxy for the network tests (tests/network), run as a process of its own:
//
//   php proxy.php UPSTREAM_HOST UPSTREAM_PORT
//
// It listens on a free loopback port, prints "listening PORT", and relays every
// connection to the upstream. It obeys one command a line on its stdin and
// answers each with one line starting "ok" (or "error") on its stdout, once the
// command is in effect. It ends when its stdin closes (the test is gone).
//
//   pass          plain relaying again: delays off, stalled replies delivered,
//                 drop and black hole over (connections that lost bytes to the
//                 black hole are reset, their byte streams being broken)
//   delay UP DOWN add UP ms to bytes going to the server, DOWN ms to bytes coming back
//   stall         pass requests on, hold every reply back (until pass)
//   drop          close every connection, and close new ones as soon as they are accepted (until pass)
//   cut           reset every current connection (RST), once; new ones are relayed as before
//   blackhole     accept and keep connections, forward nothing either way (until pass)
//   stats         "ok accepted=N open=N held=BYTES"
//   quit

declare(strict_types=1);

/** One client connection and its connection to the upstream. */
final class ProxyPair
{
    /** @var resource */
    public $client;
    /** @var resource */
    public $server;
    /** Chunks on their way, [due (hrtime ns), bytes], in order: to the server and back to the client. */
    public array $up = [];
    public array $down = [];
    /** Bytes due and not yet written. */
    public string $toServer = '';
    public string $toClient = '';
    /** Replies held back by a stall. */
    public string $held = '';
    /** The black hole swallowed bytes of this connection. */
    public bool $broken = false;

    public function __construct($client, $server)
    {
        $this->client = $client;
        $this->server = $server;
    }
}

final class Proxy
{
    /** @var resource */
    private $listener;
    /** @var ProxyPair[] by the client socket's id */
    private array $pairs = [];
    private string $control = '';
    private int $delayUp = 0;
    private int $delayDown = 0;
    private bool $stall = false;
    private bool $drop = false;
    private bool $blackhole = false;
    private int $accepted = 0;

    public function __construct(private string $host, private int $port)
    {
        $listener = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
        if ($listener === false) {
            fwrite(STDERR, "proxy: cannot listen: $errstr\n");
            exit(1);
        }
        stream_set_blocking($listener, false);
        $this->listener = $listener;
    }

    public function port(): int
    {
        $name = stream_socket_get_name($this->listener, false);
        return (int) substr($name, strrpos($name, ':') + 1);
    }

    public function run(): void
    {
        stream_set_blocking(STDIN, false);
        while (true) {
            $this->schedule();
            $read = [STDIN, $this->listener];
            $write = [];
            foreach ($this->pairs as $pair) {
                $read[] = $pair->client;
                $read[] = $pair->server;
                if ($pair->toServer !== '') {
                    $write[] = $pair->server;
                }
                if ($pair->toClient !== '') {
                    $write[] = $pair->client;
                }
            }
            $except = null;
            [$sec, $usec] = $this->nextTimeout();
            if (@stream_select($read, $write, $except, $sec, $usec) === false) {
                // A signal (e.g. SIGCHLD) interrupted the wait: look again.
                continue;
            }
            foreach ($read as $stream) {
                if ($stream === STDIN) {
                    $this->readControl();
                } elseif ($stream === $this->listener) {
                    $this->accept();
                } else {
                    $this->readFrom($stream);
                }
            }
            foreach ($write as $stream) {
                $this->writeTo($stream);
            }
        }
    }

    /** Moves chunks whose time has come into the write buffers; a stall keeps replies back. */
    private function schedule(): void
    {
        $now = hrtime(true);
        foreach ($this->pairs as $pair) {
            while ($pair->up !== [] && $pair->up[0][0] <= $now) {
                $pair->toServer .= array_shift($pair->up)[1];
            }
            while ($pair->down !== [] && $pair->down[0][0] <= $now) {
                $bytes = array_shift($pair->down)[1];
                if ($this->stall) {
                    $pair->held .= $bytes;
                } else {
                    $pair->toClient .= $bytes;
                }
            }
        }
    }

    /** How long select may sleep: until the next chunk is due, at most a second. */
    private function nextTimeout(): array
    {
        $next = null;
        foreach ($this->pairs as $pair) {
            foreach ([$pair->up, $pair->down] as $queue) {
                if ($queue !== [] && ($next === null || $queue[0][0] < $next)) {
                    $next = $queue[0][0];
                }
            }
        }
        if ($next === null) {
            return [1, 0];
        }
        $ns = max(0, $next - hrtime(true));
        $us = min(1000000, intdiv($ns + 999, 1000));
        return [intdiv($us, 1000000), $us % 1000000];
    }

    private function accept(): void
    {
        $client = @stream_socket_accept($this->listener, 0);
        if ($client === false) {
            return;
        }
        $this->accepted++;
        if ($this->drop) {
            fclose($client);
            return;
        }
        $server = @stream_socket_client("tcp://{$this->host}:{$this->port}", $errno, $errstr, 2.0);
        if ($server === false) {
            // No upstream: the client sees its connection closed, as a dead server would show it.
            fclose($client);
            return;
        }
        foreach ([$client, $server] as $s) {
            stream_set_blocking($s, false);
            stream_set_read_buffer($s, 0);
            stream_set_write_buffer($s, 0);
        }
        $this->pairs[(int) $client] = new ProxyPair($client, $server);
    }

    /** The pair a socket belongs to, and whether it is the client side. */
    private function pairOf($stream): array
    {
        foreach ($this->pairs as $pair) {
            if ($pair->client === $stream) {
                return [$pair, true];
            }
            if ($pair->server === $stream) {
                return [$pair, false];
            }
        }
        return [null, false];
    }

    private function readFrom($stream): void
    {
        [$pair, $fromClient] = $this->pairOf($stream);
        if ($pair === null) {
            return;
        }
        $bytes = @fread($stream, 65536);
        if ($bytes === false || ($bytes === '' && feof($stream))) {
            // Either side hung up: Redis connections are not half-closed, so the pair ends.
            $this->close($pair, false);
            return;
        }
        if ($bytes === '') {
            return;
        }
        if ($this->blackhole) {
            $pair->broken = true;
            return;
        }
        $now = hrtime(true);
        if ($fromClient) {
            $queue = &$pair->up;
            $delay = $this->delayUp;
        } else {
            $queue = &$pair->down;
            $delay = $this->delayDown;
        }
        // Bytes never overtake each other, even when the delay is lowered meanwhile.
        $due = $now + $delay * 1000000;
        if ($queue !== []) {
            $due = max($due, $queue[count($queue) - 1][0]);
        }
        $queue[] = [$due, $bytes];
        unset($queue);
        $this->schedule();
    }

    private function writeTo($stream): void
    {
        [$pair, $toClient] = $this->pairOf($stream);
        if ($pair === null) {
            return;
        }
        $buffer = $toClient ? $pair->toClient : $pair->toServer;
        if ($buffer === '') {
            return;
        }
        $n = @fwrite($stream, $buffer);
        if ($n === false) {
            $this->close($pair, false);
            return;
        }
        if ($toClient) {
            $pair->toClient = (string) substr($pair->toClient, $n);
        } else {
            $pair->toServer = (string) substr($pair->toServer, $n);
        }
    }

    /** Ends a pair; with $reset both sockets close with RST (SO_LINGER 0) where ext/sockets allows. */
    private function close(ProxyPair $pair, bool $reset): void
    {
        unset($this->pairs[(int) $pair->client]);
        foreach ([$pair->client, $pair->server] as $s) {
            if ($reset && function_exists('socket_import_stream')) {
                $socket = @socket_import_stream($s);
                if ($socket !== false && $socket !== null) {
                    @socket_set_option($socket, SOL_SOCKET, SO_LINGER, ['l_onoff' => 1, 'l_linger' => 0]);
                }
            }
            @fclose($s);
        }
    }

    private function readControl(): void
    {
        $chunk = fread(STDIN, 4096);
        if ($chunk === false || ($chunk === '' && feof(STDIN))) {
            exit(0);
        }
        $this->control .= $chunk;
        while (($nl = strpos($this->control, "\n")) !== false) {
            $line = trim(substr($this->control, 0, $nl));
            $this->control = substr($this->control, $nl + 1);
            $answer = $this->command($line);
            fwrite(STDOUT, $answer . "\n");
            fflush(STDOUT);
        }
    }

    private function command(string $line): string
    {
        $args = preg_split('/\s+/', $line, -1, PREG_SPLIT_NO_EMPTY);
        switch ($args[0] ?? '') {
            case 'pass':
                $this->delayUp = $this->delayDown = 0;
                $this->drop = false;
                $this->blackhole = false;
                $this->stall = false;
                foreach ($this->pairs as $pair) {
                    if ($pair->broken) {
                        $this->close($pair, true);
                        continue;
                    }
                    // Held replies go first, then whatever was still delayed, at once.
                    $pair->toClient .= $pair->held;
                    $pair->held = '';
                    foreach ($pair->down as [, $bytes]) {
                        $pair->toClient .= $bytes;
                    }
                    foreach ($pair->up as [, $bytes]) {
                        $pair->toServer .= $bytes;
                    }
                    $pair->down = $pair->up = [];
                }
                return 'ok';
            case 'delay':
                if (count($args) !== 3 || !ctype_digit($args[1]) || !ctype_digit($args[2])) {
                    return 'error: delay UP_MS DOWN_MS';
                }
                $this->delayUp = (int) $args[1];
                $this->delayDown = (int) $args[2];
                return 'ok';
            case 'stall':
                $this->stall = true;
                // What was ready for the client and not yet written is held back as well.
                foreach ($this->pairs as $pair) {
                    $pair->held .= $pair->toClient;
                    $pair->toClient = '';
                }
                return 'ok';
            case 'drop':
                $this->drop = true;
                foreach ($this->pairs as $pair) {
                    $this->close($pair, false);
                }
                return 'ok';
            case 'cut':
                foreach ($this->pairs as $pair) {
                    $this->close($pair, true);
                }
                return 'ok';
            case 'blackhole':
                $this->blackhole = true;
                // Nothing in flight arrives any more either.
                foreach ($this->pairs as $pair) {
                    if ($pair->up !== [] || $pair->down !== [] || $pair->toServer !== '' || $pair->toClient !== '' || $pair->held !== '') {
                        $pair->broken = true;
                    }
                    $pair->up = $pair->down = [];
                    $pair->toServer = $pair->toClient = $pair->held = '';
                }
                return 'ok';
            case 'stats':
                $held = 0;
                foreach ($this->pairs as $pair) {
                    $held += strlen($pair->held);
                }
                return sprintf('ok accepted=%d open=%d held=%d', $this->accepted, count($this->pairs), $held);
            case 'quit':
                fwrite(STDOUT, "ok\n");
                exit(0);
            default:
                return 'error: unknown command ' . json_encode($line);
        }
    }
}

if ($argc !== 3 || !ctype_digit($argv[2])) {
    fwrite(STDERR, "usage: php proxy.php UPSTREAM_HOST UPSTREAM_PORT\n");
    exit(2);
}
$proxy = new Proxy($argv[1], (int) $argv[2]);
fwrite(STDOUT, 'listening ' . $proxy->port() . "\n");
fflush(STDOUT);
$proxy->run();
