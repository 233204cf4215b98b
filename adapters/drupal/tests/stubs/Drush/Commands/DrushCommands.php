<?php

// Test-only stand-in for Drush\Commands\DrushCommands (drush/drush 12 and 13,
// src/Commands/DrushCommands.php): the base class of commandfiles. What the
// command pipeline (consolidation/annotated-command) needs of it: it takes the
// command's input and output (InputAwareInterface, OutputAwareInterface,
// SavableState), and gives them to the commandfile through input(), output()
// and io() (a DrushStyle there, which extends SymfonyStyle). The logger, config,
// process manager and hooks are left out.

namespace Drush\Commands;

use Consolidation\AnnotatedCommand\Output\OutputAwareInterface;
use Consolidation\AnnotatedCommand\State\SavableState;
use Consolidation\AnnotatedCommand\State\State;
use Symfony\Component\Console\Input\ArgvInput;
use Symfony\Component\Console\Input\InputAwareInterface;
use Symfony\Component\Console\Input\InputInterface;
use Symfony\Component\Console\Output\NullOutput;
use Symfony\Component\Console\Output\OutputInterface;
use Symfony\Component\Console\Style\SymfonyStyle;

abstract class DrushCommands implements OutputAwareInterface, InputAwareInterface, SavableState
{
    const EXIT_SUCCESS = 0;
    const EXIT_FAILURE = 1;

    protected ?InputInterface $input = null;
    protected ?OutputInterface $output = null;
    protected ?SymfonyStyle $io = null;

    public function __construct()
    {
    }

    public function currentState()
    {
        return new class($this, $this->input, $this->output, $this->io) implements State {
            public function __construct(private $obj, private $input, private $output, private $io)
            {
            }

            public function restore()
            {
                $this->obj->restoreState($this->input, $this->output, $this->io);
            }
        };
    }

    public function restoreState(?InputInterface $input = null, ?OutputInterface $output = null, ?SymfonyStyle $io = null)
    {
        $this->input = $input;
        $this->output = $output;
        $this->io = $io;

        return $this;
    }

    public function setInput(InputInterface $input): void
    {
        if ($input != $this->input) {
            $this->io = null;
        }
        $this->input = $input;
    }

    public function setOutput(OutputInterface $output)
    {
        if ($output != $this->output) {
            $this->io = null;
        }
        $this->output = $output;

        return $this;
    }

    protected function input(): InputInterface
    {
        if (!isset($this->input)) {
            $this->setInput(new ArgvInput());
        }

        return $this->input;
    }

    protected function output(): OutputInterface
    {
        if (!isset($this->output)) {
            $this->setOutput(new NullOutput());
        }

        return $this->output;
    }

    protected function io()
    {
        return $this->io ??= new SymfonyStyle($this->input(), $this->output());
    }
}
