<?php

// Test-only stand-in for Drush\Attributes\Option (drush/drush 12 and 13): as there,
// consolidation/annotated-command's attribute of that name under drush's namespace.

namespace Drush\Attributes;

use Attribute;

#[Attribute(Attribute::TARGET_METHOD | Attribute::IS_REPEATABLE)]
class Option extends \Consolidation\AnnotatedCommand\Attributes\Option
{
}
